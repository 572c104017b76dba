"""The paper's statements as checkable functions (numpy/scipy/sympy only)."""
