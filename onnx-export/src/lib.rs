//! Export: a Burn module's forward pass as an ONNX model (feature `export`).
//!
//! ```ignore
//! use burn_onnx_export::OnnxExporter;
//!
//! let model = MyModel::new(&device);
//! let sample = Tensor::<4>::zeros([1, 3, 224, 224], &device);
//! OnnxExporter::new().export(&model, sample, MyModel::forward)?.save("model.onnx")?;
//! ```
//!
//! The forward runs once on Burn's capture device, which records every tensor operation
//! instead of computing it; the recorded operations are lowered to ONNX opset 18 nodes, the
//! module's parameters become initializers named by their module paths, and the graph's inputs
//! and outputs are typed with the sample's dims. A forward that reads values back to the host
//! (control flow on tensor values) cannot be recorded and is an error, as is any operation
//! without an exact ONNX equivalent: [`ExportError::UnsupportedOperation`] names it.
//! [`OnnxExporter::export_dynamic`] records the forward on two samples and makes the axes that
//! differ symbolic (see `dynamic.rs`); a size it cannot compute at run time exactly is
//! [`ExportError::SymbolicShape`].

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod dynamic;
mod graph;
mod lower;
mod modules;

pub use dynamic::SymbolicAxes;
pub use graph::{tensor_proto, OPSET};
/// The ONNX protobuf messages, to inspect an exported model.
pub use onnx_ir::proto::{self, ModelProto};

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::tensor::{Bool, Device, DeviceConfig, Int, Tensor, TensorData};
use burn_capture::{CaptureBackend, CapturedGraph};
use burn_ir::{OperationIr, ScalarIr, TensorId, TensorIr};
use dynamic::Symbolic;
use graph::GraphBuilder;
use prost::Message;
use std::any::Any;
use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

/// Why a module could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A Burn operation the exporter has no exact ONNX lowering for.
    #[error("cannot export Burn operation `{op}`: no exact ONNX opset-18 lowering")]
    UnsupportedOperation {
        /// The Burn operation's name (`Log1p`).
        op: String,
    },
    /// A dtype ONNX has no element type for (quantized tensors).
    #[error("cannot export dtype {dtype}: ONNX has no such element type")]
    UnsupportedDType {
        /// The dtype, as Burn names it.
        dtype: String,
    },
    /// The forward read a tensor's values back to the host, which a recorded graph cannot do.
    #[error(
        "the forward reads tensor values back to the host ({message}): control flow or host code on tensor \
         values cannot be recorded as an ONNX graph"
    )]
    HostReadback {
        /// What the capture device reported about the read.
        message: String,
    },
    /// The forward panicked while it was being recorded.
    #[error("the forward panicked while being recorded: {message}")]
    Forward {
        /// The panic's message.
        message: String,
    },
    /// Burn's capture refused the graph's boundaries.
    #[error("graph capture failed: {0}")]
    Capture(String),
    /// An operation read a tensor the capture has no source for.
    #[error("an operation reads tensor {id}, which is neither an input, a weight nor an earlier result")]
    UnknownTensor {
        /// The capture's id of the tensor.
        id: u64,
    },
    /// `export_dynamic`: an operation that would need a size the symbolic axes change as a
    /// constant, or whose parameters differ between the two samples in a way ONNX cannot compute.
    #[error("cannot make `{op}` symbolic: {reason}")]
    SymbolicShape {
        /// The Burn operation's name.
        op: String,
        /// Why its sizes cannot be computed from the symbolic axes.
        reason: String,
    },
    /// `export_dynamic`: the samples or the axis specs do not determine the symbolic axes.
    #[error("cannot export with symbolic axes: {message}")]
    DynamicSamples {
        /// What does not agree between the samples and the specs.
        message: String,
    },
    /// Writing the file failed.
    #[error("cannot write `{path}`: {source}")]
    Io {
        /// The file the model was to be written to.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// The tensors a forward takes or returns: one tensor or a tuple of them.
pub trait ExportTensors {
    /// The same tensors on `device`.
    fn to_device(self, device: &Device) -> Self;
    /// Each tensor's capture id, dims and dtype, in order.
    fn describe(&self) -> Vec<TensorIr>;
    /// Each tensor's values, in order (to write test data beside an exported model).
    fn into_data(self) -> Vec<TensorData>;
    /// Each tensor's device, in order.
    fn devices(&self) -> Vec<Device>;
}

macro_rules! export_tensor_kind {
    ($($kind:ty),*) => {$(
        impl<const D: usize> ExportTensors for Tensor<D, $kind> {
            fn to_device(self, device: &Device) -> Self {
                Tensor::to_device(self, device)
            }
            fn describe(&self) -> Vec<TensorIr> {
                // Called only on tensors moved to the capture device, whose primitive is a
                // capture handle.
                let id = self.clone().try_into_primitive::<CaptureBackend>().map(|t| t.id());
                let id = id.unwrap_or_else(|_| TensorId::new(u64::MAX));
                vec![TensorIr::uninit(id, self.shape(), self.dtype())]
            }
            fn into_data(self) -> Vec<TensorData> {
                vec![Tensor::into_data(self)]
            }
            fn devices(&self) -> Vec<Device> {
                vec![self.device()]
            }
        }
    )*};
}
export_tensor_kind!(burn::tensor::Float, Int, Bool);

macro_rules! export_tensor_tuple {
    ($($name:ident),+) => {
        impl<$($name: ExportTensors),+> ExportTensors for ($($name,)+) {
            #[allow(non_snake_case)]
            fn to_device(self, device: &Device) -> Self {
                let ($($name,)+) = self;
                ($($name.to_device(device),)+)
            }
            #[allow(non_snake_case)]
            fn describe(&self) -> Vec<TensorIr> {
                let ($($name,)+) = self;
                let mut all = Vec::new();
                $(all.extend($name.describe());)+
                all
            }
            #[allow(non_snake_case)]
            fn devices(&self) -> Vec<Device> {
                let ($($name,)+) = self;
                let mut all = Vec::new();
                $(all.extend($name.devices());)+
                all
            }
            #[allow(non_snake_case)]
            fn into_data(self) -> Vec<TensorData> {
                let ($($name,)+) = self;
                let mut all = Vec::new();
                $(all.extend($name.into_data());)+
                all
            }
        }
    };
}
export_tensor_tuple!(A);
export_tensor_tuple!(A, B);
export_tensor_tuple!(A, B, C);
export_tensor_tuple!(A, B, C, E);
export_tensor_tuple!(A, B, C, E, F);
export_tensor_tuple!(A, B, C, E, F, G);

/// Exports modules to ONNX: graph name and input/output names are configurable.
#[derive(Clone, Debug)]
pub struct OnnxExporter {
    name: String,
    input_names: Vec<String>,
    output_names: Vec<String>,
}

impl Default for OnnxExporter {
    fn default() -> Self {
        Self::new()
    }
}

impl OnnxExporter {
    /// An exporter naming inputs `input_0, ..` and outputs `output_0, ..`.
    pub fn new() -> Self {
        Self { name: "burn_model".into(), input_names: vec![], output_names: vec![] }
    }

    /// The graph's name.
    pub fn name(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }

    /// Names of the graph inputs, in the forward's argument order (the rest keep `input_N`).
    pub fn input_names<S: AsRef<str>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.input_names = names.into_iter().map(|s| s.as_ref().to_string()).collect();
        self
    }

    /// Names of the graph outputs, in the forward's return order (the rest keep `output_N`).
    pub fn output_names<S: AsRef<str>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.output_names = names.into_iter().map(|s| s.as_ref().to_string()).collect();
        self
    }

    /// Runs `forward(model, sample)` once on the capture device and returns the recorded graph
    /// as an ONNX model with fixed dims (the sample's).
    pub fn export<M, I, O>(
        &self,
        model: &M,
        sample: I,
        forward: impl FnOnce(&M, I) -> O,
    ) -> Result<ExportedModel, ExportError>
    where
        M: Module + Clone,
        I: ExportTensors,
        O: ExportTensors,
    {
        let recording = record(model, sample, forward)?;
        self.build(&recording, None)
    }

    /// Runs `forward` on two samples whose symbolic axes differ (`axes`: one spec per input, in
    /// order; inputs without one are fixed) and returns a model whose inputs and outputs have
    /// those axes symbolic (`dim_param` named as in the spec) and which computes every size that
    /// depends on them at run time. An axis that differs between the samples without a spec, an
    /// operation that would keep a symbolic size as a constant, and samples whose sizes cannot
    /// tell two symbols apart are errors.
    pub fn export_dynamic<M, I, O>(
        &self,
        model: &M,
        [sample, second]: [I; 2],
        axes: impl IntoIterator<Item = SymbolicAxes>,
        forward: impl Fn(&M, I) -> O,
    ) -> Result<ExportedModel, ExportError>
    where
        M: Module + Clone,
        I: ExportTensors,
        O: ExportTensors,
    {
        let axes: Vec<SymbolicAxes> = axes.into_iter().collect();
        let first = record(model, sample, &forward)?;
        let other = record(model, second, &forward)?;
        let symbolic = Symbolic::compare(&first.graph, &other.graph, [&first.inputs[..], &other.inputs[..]], &axes)?;
        self.build(&first, Some(&symbolic))
    }

    fn build(&self, recording: &Recording, symbolic: Option<&Symbolic>) -> Result<ExportedModel, ExportError> {
        let captured = &recording.graph;
        let mut builder = GraphBuilder::new(&captured.values, &recording.params, symbolic);
        let inputs = named(recording.inputs.clone(), &self.input_names, "input");
        for (ir, name) in &inputs {
            builder.declare_input(ir.id, name);
        }
        for op in &captured.graph.operations {
            lower::lower(&mut builder, op)?;
        }
        let outputs = named(recording.outputs.clone(), &self.output_names, "output");
        Ok(ExportedModel { proto: builder.finish(&inputs, &outputs, &self.name)? })
    }
}

/// One recording of the forward: the captured graph, the parameters' names, and the graph's
/// inputs and outputs (their ids as the operations use them).
struct Recording {
    graph: CapturedGraph,
    params: HashMap<TensorId, String>,
    inputs: Vec<TensorIr>,
    outputs: Vec<TensorIr>,
}

/// Runs `forward(model, sample)` once on the capture device.
fn record<M, I, O>(model: &M, sample: I, forward: impl FnOnce(&M, I) -> O) -> Result<Recording, ExportError>
where
    M: Module + Clone,
    I: ExportTensors,
    O: ExportTensors,
{
    let device = Device::capture();
    let source = sample.devices().into_iter().next();
    let shared = SharedState::take(model);
    let mut boundary = None;
    let mut configured = Ok(());
    let captured = panic::catch_unwind(AssertUnwindSafe(|| {
        device.capture_scope(|scope| {
            configured = mirror_dtypes(&device, source.as_ref());
            if configured.is_err() {
                return scope.complete([], []);
            }
            let model = model.clone().to_device(&device);
            let params = ParamNames::collect(&model);
            let inputs = sample.to_device(&device);
            let input_irs = inputs.describe();
            let outputs = forward(&model, inputs);
            let output_irs = outputs.describe();
            let ids = |irs: &[TensorIr]| irs.iter().map(|t| t.id).collect::<Vec<_>>();
            let (input_ids, output_ids) = (ids(&input_irs), ids(&output_irs));
            boundary = Some((params, input_irs, output_irs));
            scope.complete(input_ids, output_ids)
        })
    }));
    shared.restore(model);
    configured?;
    let graph = captured.map_err(panic_error)?.map_err(|e| ExportError::Capture(e.to_string()))?;
    let (params, mut inputs, mut outputs) = boundary.ok_or_else(|| ExportError::Capture("no boundary".into()))?;
    // The capture resolves aliases: its boundary ids are the ones the operations use.
    for (ir, id) in inputs.iter_mut().zip(&graph.graph.inputs).chain(outputs.iter_mut().zip(&graph.graph.outputs)) {
        ir.id = *id;
    }
    Ok(Recording { graph, params, inputs, outputs })
}

/// The sample's default dtypes for the capture device, so that the graph records the types the
/// forward computes in on its own device (flex's integers are i32, the capture device's i64).
/// Device settings are set inside the scope: outside it the capture device has no client.
fn mirror_dtypes(device: &Device, source: Option<&Device>) -> Result<(), ExportError> {
    let Some(source) = source else { return Ok(()) };
    let settings = source.settings();
    let config = DeviceConfig::new(Some(settings.float_dtype), Some(settings.int_dtype), Some(settings.bool_dtype));
    device.clone().configure(config).map_err(|e| ExportError::Capture(format!("{e:?}")))
}

fn named(irs: Vec<TensorIr>, names: &[String], prefix: &str) -> Vec<(TensorIr, String)> {
    irs.into_iter()
        .enumerate()
        .map(|(i, ir)| (ir, names.get(i).cloned().unwrap_or_else(|| format!("{prefix}_{i}"))))
        .collect()
}

fn panic_error(payload: Box<dyn std::any::Any + Send>) -> ExportError {
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".into());
    if message.contains("has no concrete value") {
        ExportError::HostReadback { message }
    } else {
        ExportError::Forward { message }
    }
}

/// The float tensors of a module by parameter id. Clones of a module share their buffers (a
/// BatchNorm's running statistics), so moving the clone to the capture device moves the
/// caller's too; putting them back afterwards leaves the caller's module usable.
struct SharedState {
    tensors: HashMap<ParamId, Box<dyn Any>>,
}

impl SharedState {
    fn take<M: Module>(model: &M) -> Self {
        let mut state = Self { tensors: HashMap::new() };
        model.visit(&mut state);
        state
    }

    fn restore<M: Module + Clone>(mut self, model: &M) {
        let _ = model.clone().map(&mut self);
    }
}

impl ModuleVisitor for SharedState {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        self.tensors.insert(param.id, Box::new(param.val()));
    }
}

impl ModuleMapper for SharedState {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        match self.tensors.get(&param.id).and_then(|t| t.downcast_ref::<Tensor<D>>()) {
            Some(original) => Param::initialized(param.id, original.clone()),
            None => param,
        }
    }
}

/// Module paths (`layer1.0.conv.weight`) of the parameters, by capture id, to name initializers.
#[derive(Default)]
struct ParamNames {
    path: Vec<String>,
    names: HashMap<TensorId, String>,
}

impl ParamNames {
    fn collect<M: Module>(model: &M) -> HashMap<TensorId, String> {
        let mut visitor = Self::default();
        model.visit(&mut visitor);
        visitor.names
    }

    fn add(&mut self, described: Vec<TensorIr>) {
        for ir in described {
            self.names.entry(ir.id).or_insert_with(|| self.path.join("."));
        }
    }
}

impl ModuleVisitor for ParamNames {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.push(name.to_string());
    }

    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.pop();
    }

    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        self.add(param.val().describe());
    }

    fn visit_int<const D: usize>(&mut self, param: &Param<Tensor<D, Int>>) {
        self.add(param.val().describe());
    }

    fn visit_bool<const D: usize>(&mut self, param: &Param<Tensor<D, Bool>>) {
        self.add(param.val().describe());
    }
}

/// An exported ONNX model.
#[derive(Clone, Debug)]
pub struct ExportedModel {
    proto: ModelProto,
}

impl ExportedModel {
    /// The model as protobuf bytes (an `.onnx` file's contents).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.proto.encode_to_vec()
    }

    /// Writes the `.onnx` file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), ExportError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_bytes())
            .map_err(|source| ExportError::Io { path: path.display().to_string(), source })
    }

    /// The model message itself.
    pub fn proto(&self) -> &ModelProto {
        &self.proto
    }

    /// The op type of every node, in graph order.
    pub fn op_types(&self) -> Vec<&str> {
        self.proto.graph.iter().flat_map(|g| &g.node).map(|n| n.op_type()).collect()
    }
}

/// A tensor as `TensorProto` bytes (the `.pb` files of ONNX test cases), for writing the
/// inputs and expected outputs beside an exported model.
pub fn tensor_pb(name: &str, data: &TensorData) -> Result<Vec<u8>, ExportError> {
    Ok(tensor_proto(name, data)?.encode_to_vec())
}

// Helpers the lowering modules (`lower`, `modules`, `dynamic`) share.

/// The error for an operation the exporter does not lower, named as Burn names it.
pub(crate) fn unsupported(op: &str) -> ExportError {
    ExportError::UnsupportedOperation { op: op.to_string() }
}

/// The Burn operation as its IR names it (`DivScalar`, `Reshape`, `Conv2d`).
pub(crate) fn operation_name(op: &OperationIr) -> String {
    match op {
        OperationIr::BaseFloat(op) | OperationIr::BaseInt(op) | OperationIr::BaseBool(op) => variant_name(op),
        OperationIr::NumericFloat(_, op) | OperationIr::NumericInt(_, op) => variant_name(op),
        OperationIr::Float(_, op) => variant_name(op),
        OperationIr::Int(op) => variant_name(op),
        OperationIr::Bool(op) => variant_name(op),
        OperationIr::Module(op) => variant_name(op),
        OperationIr::Activation(op) => variant_name(op),
        OperationIr::Custom(op) => op.id.clone(),
        other => variant_name(other),
    }
}

/// The name of an enum value's variant (its `Debug` form up to the first field).
pub(crate) fn variant_name(op: &impl std::fmt::Debug) -> String {
    let debug = format!("{op:?}");
    debug.split(['(', ' ', '{']).next().unwrap_or_default().to_string()
}

/// A Burn IR scalar as the f32 an ONNX attribute or constant holds.
pub(crate) fn scalar_f32(value: ScalarIr) -> f32 {
    match value {
        ScalarIr::Float(x) => x as f32,
        ScalarIr::Int(x) => x as f32,
        ScalarIr::UInt(x) => x as f32,
        ScalarIr::Bool(x) => f32::from(u8::from(x)),
    }
}
