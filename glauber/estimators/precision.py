"""The floating-point precision a model computes in, and the accuracy assumed of its scores.

Error bounds on quantities read from log-conditionals (Proposition 4's ``delta``, score margins)
need the unit roundoff of every format involved (:mod:`glauber.theory.floating`) and a model of
the scores' own accuracy (item 1 of :func:`glauber.theory.rectangle.rectangle_rounding_bound`).
A masked LM run in bfloat16 returns float32 scores, so the scores' dtype alone understates the
rounding: the model's ``dtype`` and ``autocast`` attributes (when present) are consulted too.
"""

from __future__ import annotations

from typing import Any

from glauber.core.protocol import ConditionalModel
from glauber.errors import InvalidParameterError
from glauber.theory.floating import coarsest, dtype_name

#: Default accuracy assumed of a model's scores, in units of roundoff of the precision it computes
#: in, relative to the largest |score| of the row. Measured worst cases (|error| / (u max|s|), one
#: score): AntiBERTy float32 forward against float64 97, bfloat16 against float32 12, the tiny
#: GPT-2 control (float32) against float64 15; 512 leaves a factor 5.
DEFAULT_SCORE_ERROR_ULPS = 512.0


def model_precision(model: ConditionalModel, score_dtype: Any, precision: Any = None) -> str:
    """The coarsest of the scores' format and the model's ``dtype``/``autocast`` (or ``precision``).

    Parameters
    ----------
    model : ConditionalModel
    score_dtype : dtype or str
        Format of the scores the model returned.
    precision : dtype or str, optional
        Override of the model's compute precision.

    Returns
    -------
    str
        ``"float64"``, ``"float32"``, ``"float16"`` or ``"bfloat16"``.

    Raises
    ------
    InvalidParameterError
        If ``score_dtype`` or ``precision`` is not a floating-point format.

    Examples
    --------
    >>> class Half:
    ...     dtype = "torch.bfloat16"
    >>> model_precision(Half(), "float32")
    'bfloat16'
    """
    if precision is not None:
        return coarsest(score_dtype, precision)
    declared = []
    for attr in ("dtype", "autocast"):
        value = getattr(model, attr, None)
        try:
            declared.append(dtype_name(value) if value is not None else None)
        except InvalidParameterError:  # an integer or unknown dtype says nothing about rounding
            continue
    return coarsest(score_dtype, *declared)


__all__ = ["DEFAULT_SCORE_ERROR_ULPS", "model_precision"]
