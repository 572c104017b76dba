"""Random draws of a batch of chains in the model's array library and on its device.

A numpy ``Generator`` for toy models, a ``torch.Generator`` on the model's device for MLMs
(:func:`device_generator`), so a torch chain never sends states to the host between steps:
uniforms, one uniform site per chain and a Gumbel-max draw from each row of log-weights, as
:mod:`glauber.estimators.kernel_steps` (the kernels of docs/theory.md, "Notation") uses them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glauber.core.arrays import is_torch, namespace


SeedLike = int | np.random.Generator | None


def device_generator(template: Any, seed: Any) -> Any:
    """Return a random generator for arrays of ``template``'s kind.

    Parameters
    ----------
    template : array
        A numpy array or a torch tensor; the generator lives on the tensor's device.
    seed : int, numpy.random.Generator or torch.Generator
        A ``torch.Generator`` is returned unchanged for torch arrays; a numpy ``Generator`` is
        returned unchanged for numpy arrays. Otherwise the generator is seeded from ``seed``
        (a numpy ``Generator`` seeds a torch generator with one 63-bit draw).
    """
    if is_torch(template):
        torch = namespace(template)
        if isinstance(seed, torch.Generator):
            return seed
        draw = np.random.default_rng(seed).integers(2**63 - 1)
        return torch.Generator(device=template.device).manual_seed(int(draw))
    return np.random.default_rng(seed)


def uniform(template: Any, size: int, generator: Any) -> Any:
    """Uniform draws on ``[0, 1)``, shape ``(size,)``, in ``template``'s library, dtype, device."""
    if is_torch(template):
        torch = namespace(template)
        return torch.rand(size, generator=generator, device=template.device, dtype=template.dtype)
    return generator.random(size)


def random_sites(template: Any, free_sites: Any, size: int, generator: Any) -> Any:
    """One site per chain, drawn independently and uniformly from ``free_sites``.

    ``free_sites`` is an index array in ``template``'s library (and on its device).
    """
    if is_torch(template):
        torch = namespace(template)
        pick = torch.randint(len(free_sites), (size,), generator=generator, device=template.device)
        return free_sites[pick]
    return free_sites[generator.integers(len(free_sites), size=size)]


def sample_categorical(log_weights: Any, generator: Any) -> Any:
    """Gumbel-max draw from each row of unnormalised log-weights ``[B, q]`` (``-inf`` allowed).

    Returns ``argmax_a (log_weights[b, a] + G[b, a])`` with i.i.d. standard Gumbel ``G``, a draw
    from the normalised weights of row ``b``. Rows that are all ``-inf`` return index 0 (callers
    never use them). Runs in the array library and on the device of ``log_weights``.
    """
    if is_torch(log_weights):
        torch = namespace(log_weights)
        u = torch.rand(
            log_weights.shape,
            generator=generator,
            device=log_weights.device,
            dtype=log_weights.dtype,
        )
        tiny = torch.finfo(log_weights.dtype).tiny
        g = -torch.log(-torch.log(u.clamp_min(tiny)))
        return torch.argmax(log_weights + g, dim=-1)
    g = generator.gumbel(size=np.shape(log_weights))
    return np.argmax(np.asarray(log_weights) + g, axis=-1)


__all__ = [
    "device_generator",
    "random_sites",
    "sample_categorical",
    "SeedLike",
    "uniform",
]
