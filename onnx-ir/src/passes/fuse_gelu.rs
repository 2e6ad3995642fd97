//! Fuses the GELU that exporters spell out into one `Gelu` node (one pass over the
//! activations instead of five to eight, no intermediate tensors):
//! - the exact form, as PyTorch and Hugging Face BERT export it:
//!   `x * 0.5 * (1 + erf(x / sqrt(2)))`, the division possibly a product by `1 / sqrt(2)`;
//! - the tanh form (GPT-2's `gelu_new`):
//!   `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`, the cube `Pow(x, 3)` or
//!   `x * (x * x)`.
//!
//! The three factors `x`, `0.5` and the `1 + ...` term may be multiplied in any grouping,
//! every Add and Mul may have its operands either way round, and an Add may be a Sum of two
//! (ONNX's own expansion of Gelu). Constants are single elements,
//! matched to a relative 1e-6 (what f32 keeps of them). Every intermediate must feed only the
//! pattern and be no graph output, and the result must have `x`'s shape.

use super::{fuse_matches, Dataflow, Fusion};
use crate::ops::{BinaryOp, Op, UnaryOp, VariadicOp};
use crate::ops::{Graph, Node, ValueId};

const SQRT_2_OVER_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI * std::f64::consts::FRAC_1_SQRT_2;
const CUBIC_COEFFICIENT: f64 = 0.044715;
const TOLERANCE: f64 = 1e-6;

pub fn fuse_gelu(graph: &mut Graph) {
    let flow = Dataflow::of(graph);
    fuse_matches(graph, false, |graph, index| {
        let gelu = Pattern { graph, flow: &flow }.gelu(&graph.nodes[index])?;
        Some(Fusion {
            op: Op::Unary(UnaryOp::Gelu { tanh: gelu.tanh }),
            inputs: vec![Some(gelu.x)],
            absorbed: gelu.absorbed,
        })
    });
}

/// A matched GELU of `x`: which form, and the indices of the nodes it replaces but its last.
struct Gelu {
    x: ValueId,
    tanh: bool,
    absorbed: Vec<usize>,
}

/// Matches the parts of a GELU; each node it takes must be the sole producer of what its
/// reader in the pattern reads.
struct Pattern<'g> {
    graph: &'g Graph,
    flow: &'g Dataflow,
}

/// `f(a, b)`, else `f(b, a)`: the operands of a commutative op either way round.
fn either<T>([a, b]: [ValueId; 2], f: impl Fn(ValueId, ValueId) -> Option<T>) -> Option<T> {
    f(a, b).or_else(|| f(b, a))
}

impl Pattern<'_> {
    /// The GELU that Mul node `last` completes: `x * 0.5 * gate`, grouped either way.
    fn gelu(&self, last: &Node) -> Option<Gelu> {
        let outer = binary_operands(last, BinaryOp::Mul)?;
        let output = *last.outputs.first()?;
        either(outer, |grouped, third| {
            let (inner, [a, b]) = self.binary(grouped, BinaryOp::Mul)?;
            // The three factors, whichever two the inner Mul multiplies.
            let factors = [a, b, third];
            (0..3).find_map(|half| {
                if !self.is_constant(factors[half], 0.5) {
                    return None;
                }
                let rest = [factors[(half + 1) % 3], factors[(half + 2) % 3]];
                let mut gelu = either(rest, |x, gate| self.gate(gate, x))?;
                gelu.absorbed.push(inner);
                self.fits(gelu.x, output).then_some(gelu)
            })
        })
    }

    /// `1 + erf(x / sqrt 2)` or `1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))`.
    fn gate(&self, gate: ValueId, x: ValueId) -> Option<Gelu> {
        let (add, operands) = self.binary(gate, BinaryOp::Add)?;
        either(operands, |activation, one| {
            if !self.is_constant(one, 1.0) {
                return None;
            }
            let erf = || {
                let (node, arg) = self.unary(activation, UnaryOp::Erf)?;
                Some((node, false, self.erf_argument(arg, x)?))
            };
            let tanh = || {
                let (node, arg) = self.unary(activation, UnaryOp::Tanh)?;
                Some((node, true, self.tanh_argument(arg, x)?))
            };
            let (node, is_tanh, mut absorbed) = erf().or_else(tanh)?;
            absorbed.extend([node, add]);
            Some(Gelu { x, tanh: is_tanh, absorbed })
        })
    }

    /// `x / sqrt 2` or `x * (1 / sqrt 2)`.
    fn erf_argument(&self, arg: ValueId, x: ValueId) -> Option<Vec<usize>> {
        if let Some((div, [dividend, divisor])) = self.binary(arg, BinaryOp::Div) {
            return (dividend == x && self.is_constant(divisor, std::f64::consts::SQRT_2)).then(|| vec![div]);
        }
        let (mul, operands) = self.binary(arg, BinaryOp::Mul)?;
        either(operands, |v, c| (v == x && self.is_constant(c, std::f64::consts::FRAC_1_SQRT_2)).then(|| vec![mul]))
    }

    /// `sqrt(2 / pi) * (x + 0.044715 * x^3)`.
    fn tanh_argument(&self, arg: ValueId, x: ValueId) -> Option<Vec<usize>> {
        let (scale, operands) = self.binary(arg, BinaryOp::Mul)?;
        either(operands, |sum, c| {
            if !self.is_constant(c, SQRT_2_OVER_PI) {
                return None;
            }
            let (add, terms) = self.binary(sum, BinaryOp::Add)?;
            either(terms, |v, cubic| {
                if v != x {
                    return None;
                }
                let (mul, factors) = self.binary(cubic, BinaryOp::Mul)?;
                let mut nodes = either(factors, |cube, c| {
                    self.is_constant(c, CUBIC_COEFFICIENT).then(|| self.cube(cube, x)).flatten()
                })?;
                nodes.extend([mul, add, scale]);
                Some(nodes)
            })
        })
    }

    /// `Pow(x, 3)`, `x * (x * x)` or `(x * x) * x`.
    fn cube(&self, cube: ValueId, x: ValueId) -> Option<Vec<usize>> {
        if let Some((pow, [base, exponent])) = self.binary(cube, BinaryOp::Pow) {
            return (base == x && self.is_constant(exponent, 3.0)).then(|| vec![pow]);
        }
        let (mul, factors) = self.binary(cube, BinaryOp::Mul)?;
        either(factors, |v, square| {
            let (inner, operands) = self.binary(square, BinaryOp::Mul)?;
            (v == x && operands == [x, x]).then(|| vec![inner, mul])
        })
    }

    /// The node producing `value` when it is a `op` node whose result feeds only the pattern:
    /// its index and operands.
    fn binary(&self, value: ValueId, op: BinaryOp) -> Option<(usize, [ValueId; 2])> {
        let index = self.flow.sole_producer(self.graph, value)?;
        Some((index, binary_operands(&self.graph.nodes[index], op)?))
    }

    fn unary(&self, value: ValueId, op: UnaryOp) -> Option<(usize, ValueId)> {
        let index = self.flow.sole_producer(self.graph, value)?;
        let node = &self.graph.nodes[index];
        (node.op == Op::Unary(op)).then_some((index, node.inputs.first().copied().flatten()?))
    }

    /// A one-element constant within [`TOLERANCE`] of `expected`.
    fn is_constant(&self, value: ValueId, expected: f64) -> bool {
        let scalar = self.graph.constant(Some(value)).and_then(|data| data.scalar_f64());
        scalar.is_some_and(|v| (v - expected).abs() <= TOLERANCE * expected.abs())
    }

    /// Whether the result has `x`'s rank: one-element constants of more axes would add
    /// leading ones to its shape. (`x` is float: the operands of a Mul have one dtype, and an
    /// integer constant is never 0.5.)
    fn fits(&self, x: ValueId, output: ValueId) -> bool {
        self.graph.values[x].ty.rank() == self.graph.values[output].ty.rank()
    }
}

/// The operands of a plain (numpy-broadcasting) binary `op` node, or for Add of a Sum of two
/// (as ONNX's own expansion of Gelu writes it).
fn binary_operands(node: &Node, op: BinaryOp) -> Option<[ValueId; 2]> {
    let matches = match &node.op {
        Op::Binary(c) => c.op == op && c.legacy_axis.is_none(),
        Op::Variadic(VariadicOp::Sum) => op == BinaryOp::Add,
        _ => false,
    };
    match node.inputs[..] {
        [Some(a), Some(b)] if matches => Some([a, b]),
        _ => None,
    }
}
