//! The ONNX graph under construction: names for captured tensors, initializers for the values
//! the capture recorded (weights, constants made inside the forward), deduplicated constants for
//! attributes that ONNX takes as inputs (shapes, axes, scalars), and the final `ModelProto`.

use super::dynamic::{Dim, Monomial, Symbolic, SymbolicSlice};
use super::ExportError;
use burn::tensor::{DType, Scalar, TensorData};
use burn_ir::{ScalarIr, TensorId, TensorIr};
use onnx_ir::proto::{
    attribute_proto::AttributeType, tensor_proto::DataType, tensor_shape_proto, type_proto, AttributeProto, GraphProto,
    ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The opset the exporter writes: every lowering targets this version's signatures.
pub const OPSET: i64 = 18;
/// IR version 8 is the first that opset 18 requires.
const IR_VERSION: i64 = 8;

/// ONNX's element type for a Burn dtype, or `None` where ONNX has no equivalent.
pub fn onnx_elem_type(dtype: DType) -> Option<DataType> {
    Some(match dtype {
        DType::F64 => DataType::Double,
        DType::F32 | DType::Flex32 => DataType::Float,
        DType::F16 => DataType::Float16,
        DType::BF16 => DataType::Bfloat16,
        DType::I64 => DataType::Int64,
        DType::I32 => DataType::Int32,
        DType::I16 => DataType::Int16,
        DType::I8 => DataType::Int8,
        DType::U64 => DataType::Uint64,
        DType::U32 => DataType::Uint32,
        DType::U16 => DataType::Uint16,
        DType::U8 => DataType::Uint8,
        DType::Bool(_) => DataType::Bool,
        DType::QFloat(_) => return None,
    })
}

/// ONNX's element type code for a Burn dtype, or the error naming the dtype.
pub fn elem_type(dtype: DType) -> Result<i32, ExportError> {
    onnx_elem_type(dtype).map(|t| t as i32).ok_or_else(|| ExportError::UnsupportedDType { dtype: format!("{dtype:?}") })
}

/// A tensor as an ONNX `TensorProto` (raw little-endian data; booleans one byte each).
pub fn tensor_proto(name: &str, data: &TensorData) -> Result<TensorProto, ExportError> {
    let raw = match data.dtype() {
        // Burn may store booleans as u8 or u32 words; ONNX wants one byte per element.
        DType::Bool(_) => data.iter::<bool>().map(u8::from).collect(),
        DType::Flex32 => data.iter::<f32>().flat_map(f32::to_le_bytes).collect(),
        _ => data.as_bytes().to_vec(),
    };
    Ok(TensorProto {
        name: Some(name.to_string()),
        dims: ints(data.shape().iter().copied()),
        data_type: Some(elem_type(data.dtype())?),
        raw_data: Some(raw),
        ..Default::default()
    })
}

/// Sizes, axes or dims as ONNX's int64s.
pub fn ints(values: impl IntoIterator<Item = usize>) -> Vec<i64> {
    values.into_iter().map(|v| v as i64).collect()
}

/// A graph input or output: name, element type, and dims: fixed, named after their symbols, or
/// left unnamed where no product of symbols fits them.
fn value_info(
    name: &str,
    tensor: &TensorIr,
    dims: &[Dim],
    symbolic: Option<&Symbolic>,
) -> Result<ValueInfoProto, ExportError> {
    use tensor_shape_proto::dimension::Value;
    let dim = dims
        .iter()
        .map(|d| tensor_shape_proto::Dimension {
            value: match (d, symbolic) {
                (Dim::Fixed(n), _) => Some(Value::DimValue(*n)),
                (Dim::Sym(m), Some(symbolic)) => Some(Value::DimParam(symbolic.dim_name(m))),
                _ => None,
            },
            ..Default::default()
        })
        .collect();
    Ok(ValueInfoProto {
        name: Some(name.to_string()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(elem_type(tensor.dtype)?),
                shape: Some(TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// An attribute value of a node.
pub enum Attr {
    Int(i64),
    Ints(Vec<i64>),
    Float(f32),
    Str(&'static str),
}

fn attribute(name: &str, value: Attr) -> AttributeProto {
    let mut a = AttributeProto { name: Some(name.to_string()), ..Default::default() };
    let kind = match value {
        Attr::Int(i) => {
            a.i = Some(i);
            AttributeType::Int
        }
        Attr::Ints(ints) => {
            a.ints = ints;
            AttributeType::Ints
        }
        Attr::Float(f) => {
            a.f = Some(f);
            AttributeType::Float
        }
        Attr::Str(s) => {
            a.s = Some(s.as_bytes().to_vec());
            AttributeType::String
        }
    };
    a.r#type = Some(kind as i32);
    a
}

/// Key of a deduplicated constant: its dtype, dims and bytes.
type ConstantKey = (i32, Vec<i64>, Vec<u8>);

/// Builds the graph while the captured operations are lowered one by one.
pub struct GraphBuilder<'a> {
    values: &'a BTreeMap<TensorId, TensorData>,
    param_names: &'a HashMap<TensorId, String>,
    graph_inputs: HashSet<TensorId>,
    names: HashMap<TensorId, String>,
    nodes: Vec<NodeProto>,
    initializers: Vec<TensorProto>,
    constants: HashMap<ConstantKey, String>,
    used_names: HashSet<String>,
    symbolic: Option<&'a Symbolic>,
    /// Each symbol's size as a `[1]` int64 tensor, made once from its graph input's Shape.
    symbol_sizes: HashMap<usize, String>,
}

impl<'a> GraphBuilder<'a> {
    pub fn new(
        values: &'a BTreeMap<TensorId, TensorData>,
        param_names: &'a HashMap<TensorId, String>,
        symbolic: Option<&'a Symbolic>,
    ) -> Self {
        Self {
            values,
            param_names,
            graph_inputs: HashSet::new(),
            names: HashMap::new(),
            nodes: Vec::new(),
            initializers: Vec::new(),
            constants: HashMap::new(),
            used_names: HashSet::new(),
            symbolic,
            symbol_sizes: HashMap::new(),
        }
    }

    fn unique(&mut self, base: String) -> String {
        let mut name = base.clone();
        let mut n = 1;
        while !self.used_names.insert(name.clone()) {
            n += 1;
            name = format!("{base}_{n}");
        }
        name
    }

    /// Declares a runtime input of the graph.
    pub fn declare_input(&mut self, id: TensorId, name: &str) {
        let name = self.unique(name.to_string());
        self.graph_inputs.insert(id);
        self.names.insert(id, name);
    }

    /// The name of a tensor an operation reads: a graph input, a node output, or a recorded value
    /// (made an initializer, named after its module parameter where it is one).
    pub fn read(&mut self, tensor: &TensorIr) -> Result<String, ExportError> {
        if let Some(name) = self.names.get(&tensor.id) {
            return Ok(name.clone());
        }
        if let Some(length) = self.symbolic.and_then(|s| s.ranges.get(&tensor.id)) {
            return self.range(tensor, length);
        }
        let data = self.values.get(&tensor.id).ok_or(ExportError::UnknownTensor { id: tensor.id.value() })?;
        let base = self.param_names.get(&tensor.id).cloned().unwrap_or_else(|| format!("const_{}", tensor.id.value()));
        let name = self.unique(base);
        self.initializers.push(tensor_proto(&name, data)?);
        self.names.insert(tensor.id, name.clone());
        Ok(name)
    }

    /// A fresh name for a value produced inside the graph that no captured tensor stands for.
    pub fn temp(&mut self, hint: &str) -> String {
        let n = self.nodes.len();
        self.unique(format!("{hint}_{n}"))
    }

    /// The name an operation's output takes.
    pub fn write(&mut self, tensor: &TensorIr) -> String {
        let name = self.unique(format!("t{}", tensor.id.value()));
        self.names.insert(tensor.id, name.clone());
        name
    }

    /// Makes `tensor` another name for the value `source` already has (for operations that do
    /// not change data, like a reshape to the same shape).
    pub fn alias(&mut self, tensor: &TensorIr, source: &str) {
        self.names.insert(tensor.id, source.to_string());
    }

    pub fn node(&mut self, op: &str, inputs: Vec<String>, outputs: Vec<String>, attrs: Vec<(&str, Attr)>) {
        let name = self.unique(format!("{op}_{}", self.nodes.len()));
        self.nodes.push(NodeProto {
            name: Some(name),
            op_type: Some(op.to_string()),
            input: inputs,
            output: outputs,
            attribute: attrs.into_iter().map(|(n, v)| attribute(n, v)).collect(),
            ..Default::default()
        });
    }

    /// One node with one output; returns the output's name.
    pub fn op(&mut self, op: &str, inputs: Vec<String>, out: &TensorIr, attrs: Vec<(&str, Attr)>) -> String {
        let output = self.write(out);
        self.node(op, inputs, vec![output.clone()], attrs);
        output
    }

    /// One node with one output that no captured tensor names; returns the output's name.
    pub fn op_temp(&mut self, op: &str, inputs: Vec<String>, attrs: Vec<(&str, Attr)>) -> String {
        let output = self.temp(&op.to_lowercase());
        self.node(op, inputs, vec![output.clone()], attrs);
        output
    }

    fn constant(&mut self, data: TensorData) -> Result<String, ExportError> {
        let proto = tensor_proto("", &data)?;
        let key = (proto.data_type.unwrap_or_default(), proto.dims.clone(), proto.raw_data.clone().unwrap_or_default());
        if let Some(name) = self.constants.get(&key) {
            return Ok(name.clone());
        }
        let name = self.unique(format!("c{}", self.constants.len()));
        self.initializers.push(TensorProto { name: Some(name.clone()), ..proto });
        self.constants.insert(key, name.clone());
        Ok(name)
    }

    /// A 1-D int64 constant (shapes, axes, pads, repeats).
    pub fn ints(&mut self, values: &[i64]) -> Result<String, ExportError> {
        self.constant(TensorData::new(values.to_vec(), [values.len()]))
    }

    /// A rank-0 constant of `dtype` (the scalar operand of a tensor-scalar operation).
    pub fn scalar(&mut self, value: ScalarIr, dtype: DType) -> Result<String, ExportError> {
        let data = TensorData::full_dtype(burn::tensor::Shape::new([] as [usize; 0]), value_of(value), dtype);
        self.constant(data)
    }

    /// A constant tensor of any shape filled with one value.
    pub fn filled(&mut self, value: ScalarIr, shape: &[usize], dtype: DType) -> Result<String, ExportError> {
        let data = TensorData::full_dtype(burn::tensor::Shape::from(shape.to_vec()), value_of(value), dtype);
        self.constant(data)
    }

    /// A constant from data built by a lowering (a causal mask, say).
    pub fn data(&mut self, data: TensorData) -> Result<String, ExportError> {
        self.constant(data)
    }

    /// A tensor's dims: symbolic where the two samples of `export_dynamic` differ.
    pub fn dims(&self, tensor: &TensorIr) -> Vec<Dim> {
        match self.symbolic {
            Some(symbolic) => symbolic.dims(tensor),
            None => tensor.shape.iter().map(|&d| Dim::Fixed(d as i64)).collect(),
        }
    }

    /// The slice plan of each symbolic axis, where the slice producing `out` has one.
    pub fn symbolic_slice(&self, out: &TensorIr) -> Option<&[Option<SymbolicSlice>]> {
        self.symbolic.and_then(|s| s.slices.get(&out.id)).map(Vec::as_slice)
    }

    /// The repetition count of the repeat producing `out`, where it is a size.
    pub fn symbolic_repeat(&self, out: &TensorIr) -> Option<Dim> {
        self.symbolic.and_then(|s| s.repeats.get(&out.id)).cloned()
    }

    /// The error unless the dims `axes` of `tensor` are fixed: `op` bakes their sizes into the graph.
    pub fn require_fixed(&self, tensor: &TensorIr, axes: std::ops::Range<usize>, op: &str) -> Result<(), ExportError> {
        let dims = self.dims(tensor);
        if dims.get(axes).unwrap_or_default().iter().all(|d| matches!(d, Dim::Fixed(_))) {
            return Ok(());
        }
        Err(ExportError::SymbolicShape {
            op: op.to_string(),
            reason: "its ONNX form takes this size as a constant, which the symbolic axes change".to_string(),
        })
    }

    /// A tensor's shape as a 1-D int64 value: a constant where every dim is fixed, computed at
    /// run time from the symbols otherwise.
    pub fn shape(&mut self, tensor: &TensorIr, op: &str) -> Result<String, ExportError> {
        let dims = self.dims(tensor);
        self.int_vector(&dims, op)
    }

    /// 1-D int64 values (a shape, slice bounds, repeats), constant where all are fixed.
    pub fn int_vector(&mut self, values: &[Dim], op: &str) -> Result<String, ExportError> {
        let fixed: Option<Vec<i64>> =
            values.iter().map(|d| if let Dim::Fixed(n) = d { Some(*n) } else { None }).collect();
        if let Some(fixed) = fixed {
            return self.ints(&fixed);
        }
        let mut pieces = Vec::new();
        let mut run = Vec::new();
        for value in values {
            match value {
                Dim::Fixed(n) => run.push(*n),
                Dim::Sym(monomial) => {
                    if !run.is_empty() {
                        pieces.push(self.ints(&std::mem::take(&mut run))?);
                    }
                    pieces.push(self.symbolic_size(monomial)?);
                }
                Dim::Unknown => {
                    return Err(ExportError::SymbolicShape {
                        op: op.to_string(),
                        reason: "it needs a size that differs between the two samples but is no product of the \
                                 symbols"
                            .to_string(),
                    })
                }
            }
        }
        if !run.is_empty() {
            pieces.push(self.ints(&run)?);
        }
        Ok(self.op_temp("Concat", pieces, vec![("axis", Attr::Int(0))]))
    }

    /// A product of symbols as a `[1]` int64 tensor computed from the graph inputs' shapes.
    fn symbolic_size(&mut self, monomial: &Monomial) -> Result<String, ExportError> {
        let mut value = None;
        for &symbol in &monomial.symbols {
            let size = self.symbol_size(symbol);
            value = Some(match value {
                None => size,
                Some(product) => self.op_temp("Mul", vec![product, size], vec![]),
            });
        }
        let value = value.ok_or_else(|| ExportError::Capture("a symbolic size without symbols".into()))?;
        if monomial.factor == 1 {
            return Ok(value);
        }
        let factor = self.ints(&[monomial.factor])?;
        Ok(self.op_temp("Mul", vec![value, factor], vec![]))
    }

    fn symbol_size(&mut self, index: usize) -> String {
        if let Some(name) = self.symbol_sizes.get(&index) {
            return name.clone();
        }
        let symbol = &self.symbolic.expect("symbols exist only with symbolic axes").symbols[index];
        let (input, axis) = (self.names[&symbol.input].clone(), symbol.axis as i64);
        let attrs = vec![("start", Attr::Int(axis)), ("end", Attr::Int(axis + 1))];
        let size = self.op_temp("Shape", vec![input], attrs);
        self.symbol_sizes.insert(index, size.clone());
        size
    }

    /// The constant `0, 1, .., n - 1` of a symbolic length, as a Range computed at run time.
    fn range(&mut self, tensor: &TensorIr, length: &Dim) -> Result<String, ExportError> {
        let limit = self.int_vector(std::slice::from_ref(length), "arange")?;
        let axes = self.ints(&[0])?;
        let limit = self.op_temp("Squeeze", vec![limit, axes], vec![]);
        let (start, delta) = (self.filled_i64(0)?, self.filled_i64(1)?);
        let range = self.op_temp("Range", vec![start, limit, delta], vec![]);
        let to = Attr::Int(i64::from(elem_type(tensor.dtype)?));
        let name = self.write(tensor);
        self.node("Cast", vec![range], vec![name.clone()], vec![("to", to)]);
        Ok(name)
    }

    fn filled_i64(&mut self, value: i64) -> Result<String, ExportError> {
        self.scalar(ScalarIr::Int(value), DType::I64)
    }

    /// The finished model, its outputs in the order the forward returned them.
    pub fn finish(
        mut self,
        inputs: &[(TensorIr, String)],
        outputs: &[(TensorIr, String)],
        graph_name: &str,
    ) -> Result<ModelProto, ExportError> {
        let mut output_infos = Vec::new();
        for (tensor, name) in outputs {
            let source = self.read(tensor)?;
            // An output that is an input or an initializer needs a node of its own to be an output.
            let output = self.unique(name.clone());
            self.node("Identity", vec![source], vec![output.clone()], vec![]);
            output_infos.push(value_info(&output, tensor, &self.dims(tensor), self.symbolic)?);
        }
        let input_infos = inputs
            .iter()
            .map(|(tensor, _)| value_info(&self.names[&tensor.id], tensor, &self.dims(tensor), self.symbolic))
            .collect::<Result<_, _>>()?;
        Ok(ModelProto {
            ir_version: Some(IR_VERSION),
            opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(OPSET) }],
            producer_name: Some("burn-onnx".to_string()),
            producer_version: Some(env!("CARGO_PKG_VERSION").to_string()),
            graph: Some(GraphProto {
                name: Some(graph_name.to_string()),
                node: self.nodes,
                initializer: self.initializers,
                input: input_infos,
                output: output_infos,
                ..Default::default()
            }),
            ..Default::default()
        })
    }
}

fn value_of(value: ScalarIr) -> Scalar {
    match value {
        ScalarIr::Float(x) => Scalar::Float(x),
        ScalarIr::Int(x) => Scalar::Int(x),
        ScalarIr::UInt(x) => Scalar::UInt(x),
        ScalarIr::Bool(x) => Scalar::Bool(x),
    }
}
