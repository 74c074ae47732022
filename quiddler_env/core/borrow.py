"""Borrowed arrays: the engine's arrays as its compiled kernels pass them around, with no reference counts.

numba counts the references to an array that a compiled function takes, and to every view of
one it makes: two calls of an atomic operation each (an increment where it starts, a decrement
where it ends). A move makes a dozen compiled calls with a dozen arrays each, so these counts
took a quarter of the engine's time (`benchmarks/engine_ab.py`: 1.31x without them). An array
`borrow` returns carries no count of its own (its meminfo is null, so numba's counting skips
it), nor do the views made of it. So each kernel that Python calls borrows its arrays where it
starts, once, and the calls below it pass them free.

Safe because the caller holds every array it passes until the call returns: a borrowed array
must not outlive that call, so a kernel that returns an array (a view of its scratch space, say)
must not borrow it.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core.errors import TypingError
from numba.extending import intrinsic


def _unowned(context, builder, typ, value):
    """`value` of numba type `typ` with each array in it replaced by a view that owns no reference."""
    if isinstance(typ, types.Array):
        src = context.make_array(typ)(context, builder, value=value)
        out = context.make_array(typ)(context, builder)
        out.meminfo = ir.Constant(src.meminfo.type, None)
        out.parent = ir.Constant(src.parent.type, None)
        out.nitems = src.nitems
        out.itemsize = src.itemsize
        out.data = src.data
        out.shape = src.shape
        out.strides = src.strides
        return out._getvalue()
    if isinstance(typ, types.BaseTuple):
        items = [_unowned(context, builder, t, builder.extract_value(value, k)) for k, t in enumerate(typ)]
        return context.make_tuple(builder, typ, items)
    return value  # a number: nothing to count


def _check(typ):
    if isinstance(typ, types.BaseTuple):
        for t in typ:
            _check(t)
    elif not isinstance(typ, (types.Array, types.Number, types.Boolean)):
        raise TypingError(f"borrow takes arrays, numbers and tuples of them, not {typ}")


@intrinsic
def _borrowed(typingctx, values):
    _check(values)

    def codegen(context, builder, signature, args):
        return _unowned(context, builder, values, args[0])

    return values(values), codegen


@njit(cache=True, nogil=True)
def borrow(*values):
    """The arrays among `values` (and in tuples of them) as views that own no reference, in a tuple."""
    return _borrowed(values)
