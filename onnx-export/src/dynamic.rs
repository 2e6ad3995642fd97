//! Symbolic axes (`export_dynamic`): the forward is recorded twice, on two samples whose symbolic
//! axes (batch, sequence) differ, and the two recordings are compared operation by operation.
//! A dim equal in both is fixed; a dim that differs is written as a product of the symbols and an
//! integer factor (what flatten, reshape and repeat make of them) when exactly one such product
//! fits both recordings, and computed at run time from the graph inputs' `Shape` wherever a
//! lowering needs it as a value (Reshape, Expand, Tile, Slice bounds, filled tensors, ranges).
//! Everything else that differs between the recordings (a scalar, an attribute, a constant made
//! from a size) is an error naming the operation, never a shape fixed to the first sample.

use super::{operation_name, ExportError};
use burn::tensor::{DType, Slice, TensorData};
use burn_capture::CapturedGraph;
use burn_ir::{BaseOperationIr, IrVisitorMut, OperationIr, TensorId, TensorIr};
use std::collections::{HashMap, HashSet};

/// The symbolic axes of one graph input: `(axis, name)`; inputs with the same name share the size.
#[derive(Clone, Debug, Default)]
pub struct SymbolicAxes {
    axes: Vec<(usize, String)>,
}

impl SymbolicAxes {
    /// An input whose axes are all fixed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks `axis` symbolic, named `name` in the graph (`batch`, `sequence`).
    pub fn axis(mut self, axis: usize, name: &str) -> Self {
        self.axes.push((axis, name.to_string()));
        self
    }
}

/// A symbol: its name, the graph input and axis it is read from, and its size in each sample.
#[derive(Clone, Debug)]
pub struct Symbol {
    pub name: String,
    pub input: TensorId,
    pub axis: usize,
    sizes: [u64; 2],
}

/// A product of symbols (indices, with repetition, sorted) times a positive integer factor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Monomial {
    pub factor: i64,
    pub symbols: Vec<usize>,
}

/// One dim or bound as the exported graph knows it.
#[derive(Clone, Debug, PartialEq)]
pub enum Dim {
    /// The same in every run.
    Fixed(i64),
    /// Computed at run time from the symbols.
    Sym(Monomial),
    /// Differs between the samples, but no product of symbols fits it.
    Unknown,
}

/// How a slice of a symbolic axis is written: the whole axis, or `start..end` with step 1.
#[derive(Clone, Debug)]
pub enum SymbolicSlice {
    Whole,
    Range(Dim, Dim),
}

/// What the comparison of the two recordings found, keyed by the first recording's tensor ids.
#[derive(Debug, Default)]
pub struct Symbolic {
    pub symbols: Vec<Symbol>,
    dims: HashMap<TensorId, Vec<Dim>>,
    /// Per slice output: the plan for each symbolic axis of its input (`None` on fixed axes).
    pub slices: HashMap<TensorId, Vec<Option<SymbolicSlice>>>,
    /// Per repeat output whose repetition count is a size.
    pub repeats: HashMap<TensorId, Dim>,
    /// Constants `0, 1, .., n - 1` made by the forward whose length `n` is a size.
    pub ranges: HashMap<TensorId, Dim>,
}

fn mismatch(op: &str, reason: impl Into<String>) -> ExportError {
    ExportError::SymbolicShape { op: op.to_string(), reason: reason.into() }
}

fn samples_error(message: impl Into<String>) -> ExportError {
    ExportError::DynamicSamples { message: message.into() }
}

impl Symbolic {
    /// A tensor's dims: symbolic where the recordings differ.
    pub fn dims(&self, tensor: &TensorIr) -> Vec<Dim> {
        self.dims
            .get(&tensor.id)
            .cloned()
            .unwrap_or_else(|| tensor.shape.iter().map(|&d| Dim::Fixed(d as i64)).collect())
    }

    /// The name of a symbolic dim in the graph's inputs and outputs (`batch`, `batch*sequence`).
    pub fn dim_name(&self, monomial: &Monomial) -> String {
        let factor = (monomial.factor != 1).then(|| monomial.factor.to_string());
        factor
            .into_iter()
            .chain(monomial.symbols.iter().map(|&s| self.symbols[s].name.clone()))
            .collect::<Vec<_>>()
            .join("*")
    }

    /// Compares the recordings of the same forward on two samples (`inputs`: each sample's graph
    /// inputs, in order).
    pub fn compare(
        first: &CapturedGraph,
        second: &CapturedGraph,
        inputs: [&[TensorIr]; 2],
        specs: &[SymbolicAxes],
    ) -> Result<Self, ExportError> {
        let mut symbolic = Self { symbols: symbols(inputs, specs)?, ..Self::default() };
        symbolic.check_distinguishable()?;
        let (ops, others) = (&first.graph.operations, &second.graph.operations);
        if ops.len() != others.len() {
            return Err(samples_error(format!(
                "the forward records {} operations on the first sample and {} on the second: its operations depend \
                 on the input's size",
                ops.len(),
                others.len()
            )));
        }
        let mut ids = HashMap::new();
        for (op, other) in ops.iter().zip(others) {
            symbolic.compare_op(op, other, &mut ids)?;
        }
        let graph_inputs: HashSet<TensorId> = first.graph.inputs.iter().copied().collect();
        for (second_id, data) in &second.values {
            let Some(id) = ids.get(second_id) else { continue };
            match first.values.get(id) {
                Some(first_data) if graph_inputs.contains(id) || first_data == data => {}
                Some(first_data) => symbolic.compare_constant(*id, [first_data, data])?,
                None => {}
            }
        }
        Ok(symbolic)
    }

    /// Two symbols, or two products of them, that take the same ratio in both samples cannot be
    /// told apart by the recordings.
    fn check_distinguishable(&self) -> Result<(), ExportError> {
        let products = self.products();
        for (i, a) in products.iter().enumerate() {
            for b in &products[i + 1..] {
                let (pa, pb) = (self.product(a), self.product(b));
                if pa[0] * pb[1] == pa[1] * pb[0] {
                    let name = |m: &Vec<usize>| self.dim_name(&Monomial { factor: 1, symbols: m.clone() });
                    return Err(samples_error(format!(
                        "the samples' sizes cannot tell `{}` from `{}` apart (they scale alike between the two \
                         samples): choose other sizes for the second sample",
                        name(a),
                        name(b)
                    )));
                }
            }
        }
        Ok(())
    }

    /// The empty product and every product of one or two symbols.
    fn products(&self) -> Vec<Vec<usize>> {
        let n = self.symbols.len();
        let mut products = vec![vec![]];
        products.extend((0..n).map(|i| vec![i]));
        products.extend((0..n).flat_map(|i| (i..n).map(move |j| vec![i, j])));
        products
    }

    fn product(&self, symbols: &[usize]) -> [u128; 2] {
        let size = |k: usize| symbols.iter().map(|&s| u128::from(self.symbols[s].sizes[k])).product();
        [size(0), size(1)]
    }

    /// The dim of a value that is `sizes[0]` in the first recording and `sizes[1]` in the second.
    fn infer(&self, sizes: [i64; 2]) -> Dim {
        if sizes[0] == sizes[1] {
            return Dim::Fixed(sizes[0]);
        }
        let [Ok(a), Ok(b)] = sizes.map(u128::try_from) else { return Dim::Unknown };
        // At most one product fits: check_distinguishable rejected samples where two could.
        self.products()
            .into_iter()
            .skip(1)
            .find_map(|symbols| {
                let p = self.product(&symbols);
                if p[0] == 0 || a % p[0] != 0 {
                    return None;
                }
                let factor = a / p[0];
                let factor = i64::try_from(factor).ok().filter(|&f| f > 0 && factor * p[1] == b)?;
                Some(Dim::Sym(Monomial { factor, symbols }))
            })
            .unwrap_or(Dim::Unknown)
    }

    /// Pairs the tensors of the same operation in both recordings, records their dims, and checks
    /// that nothing but the shapes differs, apart from slice bounds and repetition counts.
    fn compare_op(
        &mut self,
        op: &OperationIr,
        other: &OperationIr,
        ids: &mut HashMap<TensorId, TensorId>,
    ) -> Result<(), ExportError> {
        let name = operation_name(op);
        let (tensors, other_tensors) = (op.nodes(), other.nodes());
        if name != operation_name(other) || tensors.len() != other_tensors.len() {
            return Err(samples_error(format!(
                "the forward records `{name}` on the first sample and `{}` on the second: its operations depend on \
                 the input's size",
                operation_name(other)
            )));
        }
        for (tensor, other_tensor) in tensors.iter().zip(&other_tensors) {
            if tensor.shape.len() != other_tensor.shape.len() {
                return Err(mismatch(&name, "a tensor's rank differs between the two samples"));
            }
            ids.insert(other_tensor.id, tensor.id);
            let dims = tensor
                .shape
                .iter()
                .zip(other_tensor.shape.iter())
                .map(|(&a, &b)| self.infer([a as i64, b as i64]))
                .collect::<Vec<_>>();
            if dims.iter().any(|d| !matches!(d, Dim::Fixed(_))) {
                self.dims.insert(tensor.id, dims);
            }
        }
        // The second operation with the first one's tensors: equal unless a parameter differs.
        let mut aligned = other.clone();
        aligned.visit_mut(&mut Replace { tensors: tensors.iter().map(|t| (*t).clone()).collect(), next: 0 });
        if &aligned == op {
            return Ok(());
        }
        match (op, other) {
            (OperationIr::BaseFloat(a), OperationIr::BaseFloat(b))
            | (OperationIr::BaseInt(a), OperationIr::BaseInt(b))
            | (OperationIr::BaseBool(a), OperationIr::BaseBool(b)) => self.compare_base(a, b, &name),
            _ => Err(mismatch(&name, "its parameters differ between the two samples")),
        }
    }

    fn compare_base(&mut self, op: &BaseOperationIr, other: &BaseOperationIr, name: &str) -> Result<(), ExportError> {
        match (op, other) {
            (BaseOperationIr::Slice(a), BaseOperationIr::Slice(b)) => {
                let mut plan = Vec::new();
                for (axis, (ra, rb)) in a.ranges.iter().zip(&b.ranges).enumerate() {
                    let sizes = [a.tensor.shape[axis], b.tensor.shape[axis]];
                    plan.push(self.slice_axis([ra, rb], sizes, name)?);
                }
                self.slices.insert(a.out.id, plan);
                Ok(())
            }
            (BaseOperationIr::RepeatDim(a), BaseOperationIr::RepeatDim(b)) if a.dim == b.dim => {
                match self.infer([a.times as i64, b.times as i64]) {
                    Dim::Unknown => {
                        Err(mismatch(name, "the repetition count differs and is no product of the symbols"))
                    }
                    times => {
                        self.repeats.insert(a.out.id, times);
                        Ok(())
                    }
                }
            }
            _ => Err(mismatch(name, "its parameters differ between the two samples")),
        }
    }

    /// The slice of one axis: the same in both recordings on a fixed axis; on a symbolic axis the
    /// whole axis, or bounds that are constants, products of symbols, or a constant from the end.
    fn slice_axis(
        &self,
        ranges: [&Slice; 2],
        sizes: [usize; 2],
        op: &str,
    ) -> Result<Option<SymbolicSlice>, ExportError> {
        let [(a, step_a), (b, step_b)] = [0, 1].map(|k| ranges[k].to_range_and_step(sizes[k]));
        if sizes[0] == sizes[1] {
            return if (a.clone(), step_a) == (b, step_b) {
                Ok(None)
            } else {
                Err(mismatch(op, "the slice of a fixed axis differs between the two samples"))
            };
        }
        if step_a != 1 || step_b != 1 {
            return Err(mismatch(op, "a slice of a symbolic axis with a step other than 1"));
        }
        if a.start == 0 && b.start == 0 && a.end == sizes[0] && b.end == sizes[1] {
            return Ok(Some(SymbolicSlice::Whole));
        }
        let bound = |x: [usize; 2]| {
            let from_end = [sizes[0] - x[0], sizes[1] - x[1]];
            match self.infer([x[0] as i64, x[1] as i64]) {
                // ONNX clamps a bound past the end to the dim.
                Dim::Unknown if from_end == [0, 0] => Ok(Dim::Fixed(i64::MAX)),
                // A negative bound counts from the end, in ONNX as in Burn.
                Dim::Unknown if from_end[0] == from_end[1] => Ok(Dim::Fixed(-(from_end[0] as i64))),
                Dim::Unknown => Err(mismatch(op, "a slice bound of a symbolic axis is no product of the symbols")),
                dim => Ok(dim),
            }
        };
        Ok(Some(SymbolicSlice::Range(bound([a.start, b.start])?, bound([a.end, b.end])?)))
    }

    /// A constant the forward made that differs between the samples: `0..n` (arange) of a size is a
    /// Range computed at run time; anything else cannot be exported with symbolic axes.
    fn compare_constant(&mut self, id: TensorId, data: [&TensorData; 2]) -> Result<(), ExportError> {
        let lengths = data.map(arange_length);
        if let [Some(a), Some(b)] = lengths {
            if let dim @ Dim::Sym(_) = self.infer([a, b]) {
                self.ranges.insert(id, dim);
                return Ok(());
            }
        }
        Err(mismatch(
            "a constant made by the forward",
            format!(
                "its values differ between the two samples (shape {:?} and {:?}) and it is not 0..n of a size",
                data[0].shape(),
                data[1].shape()
            ),
        ))
    }
}

/// `n` when `data` is the integers `0, 1, .., n - 1`.
fn arange_length(data: &TensorData) -> Option<i64> {
    let integer = matches!(data.dtype(), DType::I64 | DType::I32 | DType::I16 | DType::I8);
    if !integer || data.shape().len() != 1 {
        return None;
    }
    let values = data.iter::<i64>().collect::<Vec<_>>();
    values.iter().enumerate().all(|(i, &v)| v == i as i64).then_some(values.len() as i64)
}

/// The symbols the specs name, with their sizes in both samples; every axis that differs between
/// the samples must be named, and every named axis must differ.
fn symbols(inputs: [&[TensorIr]; 2], specs: &[SymbolicAxes]) -> Result<Vec<Symbol>, ExportError> {
    let mut symbols: Vec<Symbol> = Vec::new();
    if specs.len() > inputs[0].len() {
        return Err(samples_error(format!("{} axis specs for {} inputs", specs.len(), inputs[0].len())));
    }
    for (index, (a, b)) in inputs[0].iter().zip(inputs[1]).enumerate() {
        let spec = specs.get(index).map(|s| &s.axes[..]).unwrap_or_default();
        for &(axis, ref name) in spec {
            if axis >= a.shape.len() {
                return Err(samples_error(format!("input {index} has no axis {axis} (`{name}`)")));
            }
        }
        for (axis, (&size_a, &size_b)) in a.shape.iter().zip(b.shape.iter()).enumerate() {
            let named = spec.iter().find(|(a, _)| *a == axis).map(|(_, n)| n);
            let sizes = [size_a as u64, size_b as u64];
            match named {
                None if size_a != size_b => {
                    return Err(samples_error(format!(
                        "axis {axis} of input {index} is {size_a} in the first sample and {size_b} in the second, but \
                         no spec names it symbolic"
                    )))
                }
                None => {}
                Some(name) if size_a == size_b || size_a == 0 || size_b == 0 => {
                    return Err(samples_error(format!(
                        "`{name}` (axis {axis} of input {index}) is {size_a} in the first sample and {size_b} in the \
                         second: give a second sample where it differs, and neither empty"
                    )))
                }
                Some(name) => match symbols.iter().find(|s| &s.name == name) {
                    Some(symbol) if symbol.sizes != sizes => {
                        return Err(samples_error(format!(
                            "`{name}` is {:?} on an earlier input but {sizes:?} on axis {axis} of input {index}",
                            symbol.sizes
                        )))
                    }
                    Some(_) => {}
                    None => symbols.push(Symbol { name: name.clone(), input: a.id, axis, sizes }),
                },
            }
        }
    }
    Ok(symbols)
}

/// Puts the first recording's tensors into the second's operation, in visiting order.
struct Replace {
    tensors: Vec<TensorIr>,
    next: usize,
}

impl IrVisitorMut for Replace {
    fn visit_tensor_mut(&mut self, tensor: &mut TensorIr) {
        if let Some(t) = self.tensors.get(self.next) {
            *tensor = t.clone();
        }
        self.next += 1;
    }
}
