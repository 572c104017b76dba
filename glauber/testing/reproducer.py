"""Python source that reproduces a counterexample: the model, the temperature and both callables.

:func:`reproducer_source` writes a script that rebuilds the model from its
:class:`~glauber.toy_models.family.ModelSpec`, calls the bound and the exact value again and raises
``AssertionError`` showing the violation. The two callables are written out so the script runs
on its own:

* a function from an installed package (or ``glauber``) is imported;
* a function of the user's own code (a test file, a script, a notebook cell, a docs block
  executed with its source registered in :mod:`linecache`) is copied from its source, with the
  modules, constants and further functions of its own module that it uses; a ``lambda`` is
  copied when its line holds one lambda with its arguments;
* otherwise (no source: e.g. a lambda typed at the plain REPL) the script states the values
  that were recorded and raises with them, rebuilding only the model.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import linecache
import math
import sys
import sysconfig
import textwrap
import types
from pathlib import Path
from typing import Any, Callable

#: Names the script itself assigns.
_SCRIPT_NAMES = ("model", "tau", "bound_value", "exact_value", "finite", "tolerance", "limit",
                 "math", "ModelSpec")
_LITERALS = (bool, int, float, complex, str, bytes, type(None))
_INSTALLED = tuple(
    str(Path(p).resolve()) for key in ("stdlib", "platstdlib", "purelib", "platlib")
    if (p := sysconfig.get_paths().get(key))
)


def _is_literal(value: Any) -> bool:
    if isinstance(value, (tuple, list, frozenset, set)):
        return all(_is_literal(v) for v in value)
    if isinstance(value, dict):
        return all(_is_literal(k) and _is_literal(v) for k, v in value.items())
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, _LITERALS)


def _installed(module_name: str) -> bool:
    """Whether a module belongs to glauber, the standard library or an installed package."""
    if module_name.split(".")[0] == "glauber" or module_name in sys.builtin_module_names:
        return True
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    return file is not None and str(Path(file).resolve()).startswith(_INSTALLED)


def _import_ref(obj: Any) -> tuple[str, str] | None:
    """``(module, qualname)`` when ``import module`` then the qualname gives back ``obj``."""
    module_name = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not module_name or not qualname or module_name == "__main__" or "<" in qualname:
        return None
    try:
        target: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError):
        return None
    return (module_name, qualname) if target is obj else None


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _lambda_source(fn: types.FunctionType) -> str | None:
    """The text of ``fn``'s lambda expression when its line holds exactly one such lambda."""
    try:
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except TypeError:
        return None
    text = "".join(linecache.getlines(filename))
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    code = fn.__code__
    args = list(code.co_varnames[: code.co_argcount])
    found = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno
        and [a.arg for a in node.args.args] == args
    ]
    if len(found) != 1:
        return None
    return ast.get_source_segment(text, found[0])


class SourceWriter:
    """Collects the imports and definitions that bind names to objects in a fresh script."""

    def __init__(self) -> None:
        self.imports: list[str] = []
        self.blocks: list[str] = []
        self.bound: dict[str, Any] = {}

    def _import(self, line: str) -> None:
        if line not in self.imports:
            self.imports.append(line)

    def bind(self, name: str, obj: Any) -> bool:
        """Make ``name`` refer to ``obj`` in the script; False if that cannot be written."""
        if name in self.bound:
            return self.bound[name] is obj
        if getattr(builtins, name, None) is obj:
            return True
        self.bound[name] = obj
        if inspect.ismodule(obj):
            module = obj.__name__
            self._import(f"import {module}" if module == name else f"import {module} as {name}")
            return True
        if _is_literal(obj):
            self.blocks.append(f"{name} = {obj!r}")
            return True
        ref = _import_ref(obj)
        if ref is not None and _installed(ref[0]):
            return self._bind_import(name, *ref)
        if isinstance(obj, types.FunctionType) and self._define(name, obj):
            return True
        if ref is not None:
            return self._bind_import(name, *ref)
        del self.bound[name]
        return False

    def _bind_import(self, name: str, module: str, qualname: str) -> bool:
        top, _, rest = qualname.partition(".")
        if rest:
            self._import(f"import {module}")
            self.blocks.append(f"{name} = {module}.{qualname}")
        else:
            self._import(f"from {module} import {top}" if top == name
                         else f"from {module} import {top} as {name}")
        return True

    def _define(self, name: str, fn: types.FunctionType) -> bool:
        """Copy ``fn``'s source (and what it uses) into the script under ``name``."""
        if fn.__name__ == "<lambda>":
            source = _lambda_source(fn)
            if source is None:
                return False
            body = f"{name} = {source}"
        else:
            try:
                source = textwrap.dedent(inspect.getsource(fn))
                tree = ast.parse(source)
            except (OSError, TypeError, SyntaxError):
                return False
            node = tree.body[0] if len(tree.body) == 1 else None
            if not isinstance(node, ast.FunctionDef) or node.decorator_list:
                return False
            if fn.__name__ != name and not self.bind(fn.__name__, fn):
                return False
            body = source.rstrip() if fn.__name__ == name else f"{name} = {fn.__name__}"
            if fn.__name__ != name:
                self.blocks.append(body)
                return True
        cells = zip(fn.__code__.co_freevars, fn.__closure__ or ())
        for var, cell in cells:
            if not self.bind(var, cell.cell_contents):
                return False
        for global_name in sorted(_code_names(fn.__code__)):
            if global_name in fn.__globals__ and not self.bind(global_name,
                                                               fn.__globals__[global_name]):
                return False
        self.blocks.append(body)
        return True


def _describe(fn: Callable) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def reproducer_source(bound: Callable, exact: Callable, spec: Any, tau: float, kind: str,
                      rtol: float, atol: float, bound_value: float, exact_value: float) -> str:
    """A Python script that rebuilds the counterexample and raises ``AssertionError``.

    Parameters
    ----------
    bound, exact : callable
        ``(model, tau) -> float``: the bound and the exact value that were compared.
    spec : ModelSpec or None
        The model's specification (None: the script cannot rebuild the model and states the
        recorded values only).
    tau : float
    kind : {"upper", "lower"}
    rtol, atol : float
        The comparison's tolerance: violated when the bound is off by more than
        ``rtol * max(|bound|, |exact|) + atol`` (finite values only).
    bound_value, exact_value : float
        The values recorded when the counterexample was found.

    Returns
    -------
    str
    """
    writer = SourceWriter()
    names = []
    for role, fn in (("bound_fn", bound), ("exact_fn", exact)):
        own = getattr(fn, "__name__", "")
        candidates = [own, role] if own.isidentifier() and own not in _SCRIPT_NAMES else [role]
        names.append(next((name for name in candidates if writer.bind(name, fn)), None))
    op, word = ("<=", "upper") if kind == "upper" else (">=", "lower")
    lines = [
        f"# Reproducer from glauber.testing.check_bound: the {word} bound "
        f"{_describe(bound)} against {_describe(exact)}",
        f"# fails on this model at this temperature (tolerance rtol={rtol!r}, atol={atol!r}).",
        "import math",
    ]
    if spec is not None:
        lines.append("from glauber.testing import ModelSpec")
    recorded = None in names or spec is None
    if recorded:
        lines.append("# The callables' source is not available: the recorded values are used.")
    else:
        lines += [line for line in writer.imports if line not in lines]
        if writer.blocks:
            lines += ["", "\n\n".join(writer.blocks)]
    lines.append("")
    if spec is not None:
        lines += [f"model = {spec!r}.build()", f"tau = {tau!r}"]
    else:
        lines += ["# The model has no spec (it was not drawn by glauber.testing.models).",
                  f"tau = {tau!r}"]
    if recorded:
        lines += [f"bound_value = {float(bound_value)!r}", f"exact_value = {float(exact_value)!r}"]
    else:
        lines += [f"bound_value = float({names[0]}(model, tau))",
                  f"exact_value = float({names[1]}(model, tau))"]
    where = "on {model.spec!r} " if spec is not None else ""
    lines += [
        "finite = [abs(v) for v in (bound_value, exact_value) if math.isfinite(v)]",
        f"tolerance = {rtol!r} * max(finite, default=0.0) + {atol!r}",
        f"limit = bound_value {'+' if kind == 'upper' else '-'} tolerance",
        f"assert exact_value {op} limit, (",
        f"    f\"{word} bound violated {where}at tau={{tau!r}}: \"",
        f"    f\"exact {{exact_value!r}} {'>' if kind == 'upper' else '<'} bound "
        f"{{bound_value!r}}\")",
    ]
    return "\n".join(lines) + "\n"


__all__ = ["SourceWriter", "reproducer_source"]
