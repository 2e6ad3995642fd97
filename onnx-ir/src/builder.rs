//! Builds the typed [`Graph`] from a decoded `ModelProto`: registers initializers and graph
//! inputs, folds Constant nodes into values, parses every node through the registry and
//! infers its output types in execution order.

use crate::attributes::Attributes;
use crate::error::{Error, Result, UnsupportedOp};
use crate::external::SideData;
use crate::ops::control::{self, Built, Formal, Subgraph, Subgraphs};
use crate::ops::lowered::{Lowered, Src};
use crate::ops::{self, Branch, Graph, ModelInfo, Node, NodeCtx, Value, ValueId};
use crate::proto::{GraphProto, ModelProto, NodeProto, ValueInfoProto};
use crate::tensor::TensorData;
use crate::types::{type_of, DType, Holder, TensorType};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// A node's inputs in ONNX order; `None` for an omitted optional input.
type NodeInputs = Vec<Option<ValueId>>;

/// Ops routed to user hooks, as `(domain, op_type)` (`""` for the default domain).
pub type CustomOps<'a> = &'a [(String, String)];

pub(crate) fn is_custom(custom: CustomOps, domain: &str, op_type: &str) -> bool {
    custom.iter().any(|(d, o)| d == crate::domain::canonical(domain) && o == op_type)
}

/// `data_dir`: the model's folder, for its external data (see [`crate::external`]).
pub fn build(model: &ModelProto, custom: CustomOps, data_dir: Option<&Path>) -> Result<Graph> {
    let graph = model.graph.as_ref().ok_or(Error::NoGraph)?;
    if graph.output.is_empty() {
        return Err(Error::NoOutputs);
    }
    if model.ir_version() > NEWEST_IR_VERSION {
        return Err(Error::IrVersion { version: model.ir_version(), newest: NEWEST_IR_VERSION });
    }
    // After the unsupported-op list: a model of only other domains' ops (ai.onnx.ml) is told
    // what is missing rather than that it imports no default opset (which it then needs not).
    check_supported(graph, custom)?;
    check_opset(model, uses_default_domain(graph)).map_err(Error::Opset)?;
    let context = Context { custom, data_dir };
    match build_typed(model, graph, &context, &BranchChoices::new()) {
        Err(conflict @ Error::BranchTypes { .. }) => search_branch_typings(model, graph, &context, conflict),
        other => other,
    }
}

/// IR version 3 introduced `opset_import`; older models implicitly use opset 1.
const FIRST_IR_WITH_OPSET_IMPORT: i64 = 3;

/// The default-domain opset must be one ONNX defines, as ONNX Runtime requires at load: a
/// version below 1 or above the newest in `onnx.defs`, or none at all in a model that has
/// default-domain nodes (`uses_default`) and an IR version with opset imports, is refused (the
/// importer would otherwise guess the ops' semantics).
fn check_opset(model: &ModelProto, uses_default: bool) -> Result<(), String> {
    let newest = crate::ops::arity::NEWEST_OPSET;
    match model.opset_import.iter().find(|o| crate::domain::is_default(o.domain())) {
        None if uses_default && model.ir_version() >= FIRST_IR_WITH_OPSET_IMPORT => Err(format!(
            "the model imports no opset of the default domain (ai.onnx), required from IR version \
             {FIRST_IR_WITH_OPSET_IMPORT} (the model has IR version {})",
            model.ir_version()
        )),
        None => Ok(()),
        Some(o) if !(1..=newest).contains(&o.version()) => Err(format!(
            "opset version {} of the default domain (ai.onnx) does not exist: ONNX defines 1 to {newest}",
            o.version()
        )),
        Some(_) => Ok(()),
    }?;
    for (domain, newest) in DOMAIN_OPSETS {
        if let Some(version) = crate::domain::opset(model, domain).filter(|v| !(1..=newest).contains(v)) {
            return Err(format!("opset version {version} of {domain} does not exist: it has 1 to {newest}"));
        }
    }
    Ok(())
}

/// The newest opset of the other domains whose version no lowering checks (ai.onnx.ml's and
/// ai.onnx.preview.training's do, where their ops are used); ONNX Runtime refuses a model
/// importing another version.
const DOMAIN_OPSETS: [(&str, i64); 1] = [("com.microsoft", 1)];

/// The newest IR version of the pinned onnx (1.23.2): a newer file may use what the importer
/// cannot read (ONNX Runtime refuses it too).
const NEWEST_IR_VERSION: i64 = 14;

/// For each If whose branches yield different types: whether the rest of the graph is typed
/// for its then branch (`true`) or its else branch.
type BranchChoices = BTreeMap<String, bool>;

/// Most typings [`search_branch_typings`] tries; each undecided If doubles the candidates.
const MAX_TYPINGS: usize = 256;

/// Most nodes the typing search may build in all (each typing rebuilds the whole graph): the
/// count alone lets a large graph cost 256 full imports. A deterministic bound on the work,
/// and so on the time, that still leaves a 30,000-node graph 8 typings.
const MAX_SEARCH_NODES: usize = 250_000;

/// An If whose branches yield different ranks (chosen at run time, e.g. by a symbolic dim)
/// cannot become one typed Rust value. Type the rest of the graph for each branch in turn and
/// keep the typing that fits every later node and the declared outputs while making the
/// fewest branches unreachable (such a branch becomes a run-time error, as it is in ONNX
/// Runtime when later nodes reject its rank). An If whose outputs differ only in the rank of a
/// one-element value (`[]` and `[1]`) gives up no branch: the other branch's value is reshaped.
/// No fitting typing, or a tie, leaves the original error; but typings that differ only in the
/// ranks of such reshaped values and give the graph's outputs the same types are as good as
/// each other, and where they give them other types (nothing after the If settles the rank:
/// ONNX Runtime's output has none, and it returns each branch's value as it is) the one that
/// keeps each such If's higher rank is taken (a scalar becomes `[1]`, never the reverse).
fn search_branch_typings(model: &ModelProto, graph: &GraphProto, context: &Context, conflict: Error) -> Result<Graph> {
    let mut pending = vec![BranchChoices::new()];
    let mut fitting: Vec<(usize, BranchChoices, Graph)> = vec![];
    // The Ifs whose choice reshapes a value rather than giving a branch up, with the choice
    // that keeps the higher rank.
    let mut reshapable = BTreeMap::new();
    let mut fewest = usize::MAX;
    let attempts = MAX_TYPINGS.min(MAX_SEARCH_NODES / graph.node_count().max(1)).max(1);
    for _ in 0..attempts {
        let Some(choices) = pending.pop() else { break };
        let given_up = branches_given_up(&choices, &reshapable).len();
        if given_up > fewest {
            continue; // Gives up more branches than a typing already found.
        }
        match build_typed(model, graph, context, &choices) {
            Ok(typed) => {
                fewest = fewest.min(given_up);
                fitting.push((given_up, choices, typed));
            }
            Err(Error::BranchTypes { node, reshapable: by_reshape, .. }) => {
                if let Some(then_wider) = by_reshape {
                    reshapable.insert(node.clone(), then_wider);
                }
                for then_typed in [false, true] {
                    let mut next = choices.clone();
                    next.insert(node.clone(), then_typed);
                    pending.push(next);
                }
            }
            Err(_) => {}
        }
    }
    if !pending.is_empty() {
        return Err(conflict);
    }
    // Each choice of a branch makes the other unreachable: keep the typing that gives up the fewest.
    fitting.sort_by_key(|(given_up, ..)| *given_up);
    let Some((fewest, first_choices, first)) = fitting.first() else { return Err(conflict) };
    let output_types = |g: &Graph| g.outputs.iter().map(|&o| g.values[o].ty.clone()).collect::<Vec<_>>();
    let best = fitting.iter().take_while(|(given_up, ..)| given_up == fewest);
    let same_branches = best.clone().all(|(_, choices, _)| {
        branches_given_up(choices, &reshapable) == branches_given_up(first_choices, &reshapable)
    });
    if !same_branches {
        return Err(conflict);
    }
    if best.clone().all(|(.., g)| output_types(g) == output_types(first)) {
        return Ok(fitting.swap_remove(0).2);
    }
    // The rank of a one-element value is left open: the typing that keeps the higher ranks.
    let keeps_higher_ranks =
        |choices: &BranchChoices| choices.iter().all(|(node, &then)| reshapable.get(node).is_none_or(|&w| w == then));
    let mut higher = best.enumerate().filter(|(_, (_, choices, _))| keeps_higher_ranks(choices));
    let (Some((index, (.., chosen))), rest) = (higher.next(), higher) else { return Err(conflict) };
    if !rest.map(|(_, (.., g))| g).all(|g| output_types(g) == output_types(chosen)) {
        return Err(conflict);
    }
    Ok(fitting.swap_remove(index).2)
}

/// The branch choices of `choices` that make a branch unreachable: those of the Ifs not in
/// `reshapable` (whose other branch's value is reshaped instead).
fn branches_given_up<'c>(
    choices: &'c BranchChoices,
    reshapable: &BTreeMap<String, bool>,
) -> Vec<(&'c String, &'c bool)> {
    choices.iter().filter(|(node, _)| !reshapable.contains_key(*node)).collect()
}

/// What every build of one import shares.
struct Context<'a> {
    custom: CustomOps<'a>,
    data_dir: Option<&'a Path>,
}

fn build_typed(model: &ModelProto, graph: &GraphProto, context: &Context, choices: &BranchChoices) -> Result<Graph> {
    let opset = crate::domain::default_opset(model);
    let declared = declared_types(graph);
    // Each build reads the side data afresh, so each has the whole budget.
    let side = SideData::new(context.data_dir);
    let mut b = Builder {
        graph: Graph {
            values: vec![],
            nodes: vec![],
            inputs: vec![],
            outputs: vec![],
            opset,
            side_files: vec![],
            info: ModelInfo::default(),
            fixed_dims: vec![],
        },
        names: HashMap::new(),
        defined: vec![],
        unproduced: HashMap::new(),
        custom: context.custom,
        side: &side,
        declared,
        choices,
        domain_opsets: model.opset_import.iter().map(|o| (o.domain().to_string(), o.version())).collect(),
    };
    for (name, data) in initializers(graph, &side)? {
        b.add_value(name, data.tensor_type(), Some(data));
    }
    for input in &graph.input {
        if b.names.contains_key(input.name()) {
            continue; // Older exporters list initializers among the inputs too.
        }
        if crate::input_shapes::lacks_shape(input) {
            return Err(Error::InputWithoutShape(input.name().to_string()));
        }
        let ty = graph_input_type(input)?;
        let id = b.add_value(input.name().to_string(), ty, None);
        b.graph.inputs.push(id);
    }
    for index in crate::order::execution_order(graph, |name| b.names.contains_key(name))? {
        b.add_node(&graph.node[index], index)?;
    }
    for output in &graph.output {
        let id = *b.names.get(output.name()).ok_or_else(|| match b.unproduced.get(output.name()) {
            Some((producer, op, why)) => Error::Node {
                node: producer.clone(),
                op: op.clone(),
                message: format!("its output `{}` is a graph output but {why}", output.name()),
            },
            None => Error::DanglingOutput(output.name().to_string()),
        })?;
        // `forward` returns what the graph computes, so its element type must be the one the
        // model promises (ONNX Runtime refuses the model too). A declared rank may be stale
        // (ddddocr's `common` declares rank 2 for a rank-3 output, which ONNX Runtime tolerates),
        // but a typing chosen for an If must agree with it.
        check_declared(&b.graph.values[id].ty, output, !choices.is_empty())?;
        b.graph.outputs.push(id);
    }
    Ok(b.graph)
}

/// A graph's initializers, sparse ones made dense (ONNX names a sparse one by its values).
fn initializers(graph: &GraphProto, side: &SideData) -> Result<Vec<(String, TensorData)>> {
    let dense = graph.initializer.iter().map(|t| Ok((t.name().to_string(), TensorData::from_proto(t, side)?)));
    let sparse = graph.sparse_initializer.iter().map(|t| {
        let name = t.values.as_ref().map_or("", |v| v.name()).to_string();
        Ok((name, TensorData::from_sparse(t, side)?))
    });
    dense.chain(sparse).collect()
}

/// The declared type of `output` against the inferred one: the dtype, and the rank too if `rank`.
/// Without a shape the declared element type is still checked, as ONNX Runtime does at load.
fn check_declared(inferred: &TensorType, output: &ValueInfoProto, rank: bool) -> Result<()> {
    let mismatch = |declared: String| Error::DeclaredOutput {
        name: output.name().to_string(),
        declared,
        inferred: inferred.to_string(),
    };
    match graph_input_type(output) {
        Ok(declared)
            if declared.dtype != inferred.dtype
                || declared.holder != inferred.holder
                || (rank && declared.rank() != inferred.rank()) =>
        {
            Err(mismatch(declared.to_string()))
        }
        Ok(_) => Ok(()),
        Err(_) => unreadable_contradiction(inferred, output).map_or(Ok(()), |declared| Err(mismatch(declared))),
    }
}

/// What a declared type the importer cannot read whole (no shape, an element type it does not
/// know, a map of float keys) says against the computed one, where it contradicts it: ONNX
/// Runtime refuses such a model at load.
fn unreadable_contradiction(inferred: &TensorType, output: &ValueInfoProto) -> Option<String> {
    let ty = output.r#type.as_ref().filter(|t| t.value.is_some())?;
    let tensor_computed = inferred.holder == Holder::Tensor;
    let Some(tensor) = ty.tensor_type() else {
        return tensor_computed.then(|| "a type other than a tensor".to_string());
    };
    match DType::from_onnx(tensor.elem_type()) {
        // Undefined (0) or a code the importer does not know.
        None => Some(format!("element type code {}", tensor.elem_type())),
        Some(declared) => (tensor_computed && declared != inferred.dtype).then(|| format!("{declared} (no shape)")),
    }
}

/// One error listing every op without an implementation, with node counts.
/// Ops the builder handles itself rather than through the registry.
fn builder_op(node: &NodeProto) -> bool {
    let constant = crate::domain::is_default(node.domain()) && node.op_type() == "Constant";
    constant || control::builds(node.domain(), node.op_type())
}

fn count_missing(graph: &GraphProto, custom: CustomOps, missing: &mut BTreeMap<(String, String), usize>) {
    for node in &graph.node {
        let known = builder_op(node) || is_custom(custom, node.domain(), node.op_type());
        if !known && !crate::ops::is_supported(node.domain(), node.op_type()) {
            *missing.entry((node.domain().to_string(), node.op_type().to_string())).or_default() += 1;
        }
        // Subgraphs (If branches) count too.
        for attr in &node.attribute {
            if let Some(g) = &attr.g {
                count_missing(g, custom, missing);
            }
        }
    }
}

/// Whether any node (subgraphs included) is of the default domain, which needs its opset.
fn uses_default_domain(graph: &GraphProto) -> bool {
    graph.node.iter().any(|n| {
        crate::domain::is_default(n.domain())
            || n.attribute.iter().filter_map(|a| a.g.as_ref()).any(uses_default_domain)
    })
}

fn check_supported(graph: &GraphProto, custom: CustomOps) -> Result<()> {
    let mut missing: BTreeMap<(String, String), usize> = BTreeMap::new();
    count_missing(graph, custom, &mut missing);
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::UnsupportedOps(
        missing.into_iter().map(|((domain, op_type), nodes)| UnsupportedOp { domain, op_type, nodes }).collect(),
    ))
}

/// Types the model declares for values (value_info and graph outputs) with a known rank.
fn declared_types(graph: &GraphProto) -> HashMap<String, TensorType> {
    graph
        .value_info
        .iter()
        .chain(&graph.output)
        .filter_map(|v| graph_input_type(v).ok().map(|t| (v.name().to_string(), t)))
        .collect()
}

fn graph_input_type(input: &ValueInfoProto) -> Result<TensorType> {
    let ty = input.r#type.as_ref().ok_or("the model gives it no type".to_string());
    ty.and_then(type_of).map_err(|message| Error::GraphInput { name: input.name().to_string(), message })
}

struct Builder<'a> {
    graph: Graph,
    custom: CustomOps<'a>,
    side: &'a SideData<'a>,
    declared: HashMap<String, TensorType>,
    names: HashMap<String, ValueId>,
    /// Every name defined, with the value it hid (if any), in order: leaving a subgraph rewinds
    /// it to where the subgraph began. Copying `names` per subgraph instead made the import
    /// quadratic in a model of many Ifs.
    defined: Vec<(String, Option<ValueId>)>,
    /// Outputs a node declares but the op does not produce in inference (Dropout's mask).
    /// `(producer, op type, why)`; also outputs a lowering does not produce.
    unproduced: HashMap<String, (String, String, &'static str)>,
    choices: &'a BranchChoices,
    /// The model's opset imports, as (domain, version): the versions of the domains other than
    /// the default one that lowered ops read.
    domain_opsets: Vec<(String, i64)>,
}

impl Builder<'_> {
    fn add_value(&mut self, name: String, ty: TensorType, constant: Option<TensorData>) -> ValueId {
        let id = self.graph.values.len();
        self.define(name.clone(), id);
        self.graph.values.push(Value { name, ty, constant });
        id
    }

    fn define(&mut self, name: String, id: ValueId) {
        let hidden = self.names.insert(name.clone(), id);
        self.defined.push((name, hidden));
    }

    /// Undoes the definitions made since `scope` (a subgraph's names are visible only inside it).
    fn leave_scope(&mut self, scope: usize) {
        for (name, hidden) in self.defined.drain(scope..).rev() {
            match hidden {
                Some(id) => self.names.insert(name, id),
                None => self.names.remove(&name),
            };
        }
    }

    fn resolve(&self, node: &NodeProto, node_name: &str, name: &str) -> Result<Option<ValueId>> {
        if name.is_empty() {
            return Ok(None);
        }
        if let Some(&id) = self.names.get(name) {
            return Ok(Some(id));
        }
        if let Some((producer, op, why)) = self.unproduced.get(name) {
            return Err(Error::Node {
                node: node_name.to_string(),
                op: node.op_type().to_string(),
                message: format!("uses output `{name}` of node `{producer}` ({op}), which {why}"),
            });
        }
        Err(Error::DanglingInput {
            node: node_name.to_string(),
            op: node.op_type().to_string(),
            input: name.to_string(),
        })
    }

    /// A node for a user hook: every input stays an input; output types from the built-in
    /// inference when the op is an override, else declared types, else the first input's.
    fn add_custom_node(&mut self, node: &NodeProto, name: String, inputs: NodeInputs) -> Result<()> {
        let attrs = Attributes::new(&node.attribute, &name, node.op_type(), self.side);
        let attributes = crate::ops::custom::read_attributes(&node.attribute, &attrs)?;
        let builtin = ops::lookup(node.domain(), node.op_type()).and_then(|parser| {
            let ctx = NodeCtx {
                name: &name,
                op_type: node.op_type(),
                opset: self.graph.opset,
                attrs: Attributes::new(&node.attribute, &name, node.op_type(), self.side),
                inputs: inputs.iter().map(|i| i.map(|id| &self.graph.values[id])).collect(),
                num_outputs: node.output.len(),
            };
            let parsed = parser(&ctx).ok()?;
            let types: Vec<&TensorType> =
                inputs.iter().take(parsed.data_inputs).flatten().map(|&id| &self.graph.values[id].ty).collect();
            parsed.op.infer(&types).ok()
        });
        let first = inputs.iter().flatten().next().map(|&id| self.graph.values[id].ty.clone());
        let outputs: Vec<TensorType> = match builtin {
            Some(types) => types,
            None => node
                .output
                .iter()
                .map(|o| self.declared.get(o).cloned().or_else(|| first.clone()))
                .collect::<Option<_>>()
                .ok_or_else(|| Error::Node {
                    node: name.clone(),
                    op: node.op_type().to_string(),
                    message: "the output types of a custom op need value_info or an input".into(),
                })?,
        };
        let op = crate::ops::Op::Custom(crate::ops::CustomOp {
            domain: node.domain().to_string(),
            op_type: node.op_type().to_string(),
            attributes,
            outputs: outputs.clone(),
        });
        let ids = node.output.iter().zip(outputs).map(|(o, ty)| self.add_value(o.clone(), ty, None)).collect();
        self.graph.nodes.push(Node { name, op_type: node.op_type().to_string(), op, inputs, outputs: ids });
        Ok(())
    }

    /// An If, Loop or Scan (see [`control`]).
    fn add_control_node(
        &mut self,
        node: &NodeProto,
        name: String,
        inputs: NodeInputs,
        attrs: &Attributes,
    ) -> Result<()> {
        match control::parse(self, node, &name, inputs, attrs)? {
            Built::Inline(branch) => {
                self.graph.nodes.extend(branch.nodes);
                for (out, id) in node.output.iter().zip(branch.outputs) {
                    self.define(out.clone(), id);
                }
            }
            Built::Node { op, inputs, outputs } => {
                let outputs =
                    node.output.iter().zip(outputs).map(|(o, ty)| self.add_value(o.clone(), ty, None)).collect();
                self.graph.nodes.push(Node { name, op_type: node.op_type().to_string(), op, inputs, outputs });
            }
        }
        Ok(())
    }

    fn add_constant_node(&mut self, node: &NodeProto, name: &str, attrs: &Attributes) -> Result<()> {
        let data = crate::constant::parse(attrs).map_err(|message| Error::Node {
            node: name.to_string(),
            op: node.op_type().to_string(),
            message,
        })?;
        let output = node.output.first().cloned().unwrap_or_default();
        self.add_value(output, data.tensor_type(), Some(data));
        Ok(())
    }

    /// Every value has one definition (ONNX's SSA rule, which ONNX Runtime enforces at load): a
    /// node output may not reuse the name of an earlier output, an initializer or a graph input.
    fn check_new_outputs(&self, node: &NodeProto, name: &str) -> Result<()> {
        let mut seen = std::collections::HashSet::new();
        for output in node.output.iter().filter(|o| !o.is_empty()) {
            if self.names.contains_key(output) || !seen.insert(output) {
                return Err(Error::Node {
                    node: name.to_string(),
                    op: node.op_type().to_string(),
                    message: format!(
                        "output `{output}` is already defined (by an earlier node, an initializer or a graph input)"
                    ),
                });
            }
        }
        Ok(())
    }

    fn add_node(&mut self, node: &NodeProto, index: usize) -> Result<()> {
        let name = crate::order::node_name(node, index);
        let builtin =
            crate::domain::is_default(node.domain()) && !is_custom(self.custom, node.domain(), node.op_type());
        // Before any parser: they all index their inputs by position.
        if let Some(message) = builtin
            .then(|| crate::ops::arity::check(node.op_type(), self.graph.opset, &node.input, node.output.len()))
            .flatten()
        {
            return Err(Error::Node { node: name, op: node.op_type().to_string(), message });
        }
        self.check_new_outputs(node, &name)?;
        let inputs = node.input.iter().map(|i| self.resolve(node, &name, i)).collect::<Result<Vec<_>>>()?;
        // A Constant is folded at import even when a hook names the op.
        let constant = crate::domain::is_default(node.domain()) && node.op_type() == "Constant";
        if !constant && is_custom(self.custom, node.domain(), node.op_type()) {
            return self.add_custom_node(node, name, inputs);
        }
        let attrs = Attributes::new(&node.attribute, &name, node.op_type(), self.side);
        // Opset 1's hint that an input may be overwritten in place: no effect on any value.
        attrs.ignore(&["consumed_inputs"]);
        if builder_op(node) {
            match node.op_type() {
                "Constant" => self.add_constant_node(node, &name, &attrs)?,
                _ => self.add_control_node(node, name.clone(), inputs, &attrs)?,
            }
            return attrs.check_all_read(self.graph.opset);
        }
        if crate::ops::lowering::lowers(node.domain(), node.op_type()) {
            return self.add_lowered_node(node, &name, inputs, attrs);
        }
        let parser = ops::lookup(node.domain(), node.op_type()).ok_or_else(|| Error::Node {
            node: name.clone(),
            op: node.op_type().to_string(),
            message: "no implementation".into(),
        })?;
        let ctx = NodeCtx {
            name: &name,
            op_type: node.op_type(),
            opset: self.graph.opset,
            attrs,
            inputs: inputs.iter().map(|i| i.map(|id| &self.graph.values[id])).collect(),
            num_outputs: node.output.len(),
        };
        let parsed = (parser)(&ctx)?;
        ctx.attrs.check_all_read(self.graph.opset)?;
        if let Some(lowered) = parsed.lowered {
            return self.add_lowered(node, &name, &inputs, lowered);
        }
        if let Some(data) = parsed.folded {
            let output = node.output.first().cloned().unwrap_or_default();
            self.add_value(output, data.tensor_type(), Some(data));
            return Ok(());
        }
        let data_inputs: Vec<Option<ValueId>> = inputs.into_iter().take(parsed.data_inputs).collect();
        let types: Vec<Option<&TensorType>> =
            data_inputs.iter().map(|i| i.map(|id| &self.graph.values[id].ty)).collect();
        if let Some(moved) = crate::ops::text::string_movement(&parsed.op, &types) {
            return self.add_lowered(node, &name, &data_inputs, moved);
        }
        self.add_op(name, node.op_type(), parsed.op, data_inputs, &node.output).map(|_| ())
    }

    /// A node of another domain lowered into IR ops ([`crate::ops::lowering`]).
    fn add_lowered_node(&mut self, node: &NodeProto, name: &str, inputs: NodeInputs, attrs: Attributes) -> Result<()> {
        let opset = if crate::ops::lowering::versioned_domain(node.domain()) {
            self.domain_opsets.iter().find(|(d, _)| d == node.domain()).map_or(0, |(_, v)| *v)
        } else {
            self.graph.opset
        };
        let ctx = NodeCtx {
            name,
            op_type: node.op_type(),
            opset,
            attrs,
            inputs: inputs.iter().map(|i| i.map(|id| &self.graph.values[id])).collect(),
            num_outputs: node.output.len(),
        };
        let lowered = crate::ops::lowering::lower(node.domain(), &ctx)?;
        ctx.attrs.check_all_read(ctx.opset)?;
        self.add_lowered(node, name, &inputs, lowered)
    }

    /// A node as lowered IR ops: each step becomes a node of private outputs, and the node's
    /// outputs name the values the lowering says (one it does not produce is an error where used).
    fn add_lowered(&mut self, node: &NodeProto, name: &str, inputs: &NodeInputs, lowered: Lowered) -> Result<()> {
        let constants: Vec<ValueId> = lowered
            .constants
            .into_iter()
            .enumerate()
            .map(|(i, data)| self.add_value(format!("{name}::constant{i}"), data.tensor_type(), Some(data)))
            .collect();
        let mut steps: Vec<Vec<ValueId>> = vec![];
        let resolve = |src: Src, steps: &[Vec<ValueId>]| -> Option<ValueId> {
            match src {
                Src::Input(i) => inputs.get(i).copied().flatten(),
                Src::Constant(i) => constants.get(i).copied(),
                Src::Step(step, output) => steps.get(step).and_then(|s| s.get(output)).copied(),
            }
        };
        // A step reading an input the node omits: the lowering needs it (its optional ones are
        // passed as `None`), so the node is missing a required input.
        let missing = |src: Src| Error::Node {
            node: name.to_string(),
            op: node.op_type().to_string(),
            message: match src {
                Src::Input(i) => format!("required input {i} is missing"),
                _ => "the lowering reads a value it does not make".to_string(),
            },
        };
        for (index, step) in lowered.steps.into_iter().enumerate() {
            let ids = step
                .inputs
                .into_iter()
                .map(|s| s.map(|src| resolve(src, &steps).ok_or_else(|| missing(src))).transpose())
                .collect::<Result<Vec<_>>>()?;
            let private: Vec<String> = (0..step.outputs).map(|i| format!("{name}::{index}:{i}")).collect();
            let outputs = self.add_op(format!("{name}::{index}"), node.op_type(), step.op, ids, &private)?;
            steps.push(outputs);
        }
        let mut outputs = lowered.outputs.into_iter();
        for out_name in node.output.iter() {
            match outputs.next().flatten().and_then(|s| resolve(s, &steps)) {
                _ if out_name.is_empty() => {}
                Some(id) => self.define(out_name.clone(), id),
                None => {
                    let producer = (name.to_string(), node.op_type().to_string(), "is not supported");
                    self.unproduced.insert(out_name.clone(), producer);
                }
            }
        }
        Ok(())
    }

    /// Types a parsed op's outputs and adds it (or its folded values), its outputs named
    /// `out_names` (empty for an omitted one).
    fn add_op(
        &mut self,
        name: String,
        op_type: &str,
        op: crate::ops::Op,
        data_inputs: Vec<Option<ValueId>>,
        out_names: &[String],
    ) -> Result<Vec<ValueId>> {
        let types: Vec<&TensorType> = data_inputs.iter().flatten().map(|&id| &self.graph.values[id].ty).collect();
        if let Some(ty) = types.iter().find(|t| !t.is_tensor()).filter(|_| !op.reads_sequences()) {
            return Err(Error::Node {
                node: name,
                op: op_type.to_string(),
                message: format!("reads a {ty}, but the op takes tensors only"),
            });
        }
        let out_types = op.infer(&types).map_err(|message| Error::Node {
            node: name.clone(),
            op: op_type.to_string(),
            message: format!(
                "type inference failed: {message} (inputs: {})",
                types.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
            ),
        })?;
        if let Some(ty) = types
            .iter()
            .copied()
            .chain(&out_types)
            .find(|t| t.dtype.is_low_bit())
            .filter(|_| !op.keeps_low_bit_values())
        {
            return Err(Error::Node {
                node: name,
                op: op_type.to_string(),
                message: format!(
                    "{} tensors are supported only by casts, quantization and data movement, not by this op",
                    ty.dtype
                ),
            });
        }
        if let Some(ty) = types
            .iter()
            .copied()
            .chain(&out_types)
            .find(|t| t.dtype == DType::String)
            .filter(|_| !crate::ops::text::reads_strings(&op))
        {
            return Err(Error::Node {
                node: name,
                op: op_type.to_string(),
                message: format!(
                    "{ty}: string tensors are supported only by the text ops (StringConcat, StringSplit, \
                     StringNormalizer, RegexFullMatch, LabelEncoder), Equal and Identity, not by this op"
                ),
            });
        }
        // One check for every op: no tensor of a shape whose element count overflows can exist
        // (ConstantOfShape, Expand, Tile, Pad, ... of huge static dims).
        if let Some((i, ty)) = out_types
            .iter()
            .enumerate()
            .find(|(_, t)| t.static_shape().is_some_and(|s| crate::ops::common::checked_product(s).is_none()))
        {
            return Err(Error::Node {
                node: name,
                op: op_type.to_string(),
                message: format!("output {i} would be {ty}, whose element count overflows"),
            });
        }
        // Every input known now: evaluate instead of emitting a node.
        let constants: Option<Vec<&TensorData>> =
            data_inputs.iter().flatten().map(|&id| self.graph.values[id].constant.as_ref()).collect();
        if let Some(folded) = constants
            .filter(|c| !c.is_empty() && out_types.iter().all(TensorType::is_tensor))
            .and_then(|c| crate::passes::fold::eval(&op, &c, &out_types))
        {
            let ids = out_names.iter().zip(folded).map(|(n, d)| self.add_value(n.clone(), d.tensor_type(), Some(d)));
            return Ok(ids.collect());
        }
        let mut outputs = vec![];
        for (i, out_name) in out_names.iter().enumerate() {
            match out_types.get(i) {
                // An omitted optional output still holds its position, under a private name.
                Some(ty) if out_name.is_empty() => {
                    let id = self.graph.values.len();
                    self.graph.values.push(Value {
                        name: format!("{name}_unused_{i}"),
                        ty: ty.clone(),
                        constant: None,
                    });
                    outputs.push(id);
                }
                Some(ty) => outputs.push(self.add_value(out_name.clone(), ty.clone(), None)),
                None if out_name.is_empty() => {}
                None => {
                    let producer = (name.clone(), op_type.to_string(), "is only produced in training mode");
                    self.unproduced.insert(out_name.clone(), producer);
                }
            }
        }
        self.graph.nodes.push(Node {
            name,
            op_type: op_type.to_string(),
            op,
            inputs: data_inputs,
            outputs: outputs.clone(),
        });
        Ok(outputs)
    }
}

/// Subgraphs are built by the same builder, one scope in.
impl Subgraphs for Builder<'_> {
    fn value(&self, id: ValueId) -> &Value {
        &self.graph.values[id]
    }

    fn opset(&self) -> i64 {
        self.graph.opset
    }

    fn domain_opset(&self, domain: &str) -> Option<i64> {
        self.domain_opsets.iter().find(|(d, _)| d == domain).map(|(_, v)| *v)
    }

    /// Builds one subgraph (an If branch, a Scan body): its nodes go to a list of their own;
    /// names it defines, its formal inputs among them, are visible only inside it (sibling
    /// branches may reuse them). Returns the subgraph and its formal inputs' values.
    fn build_subgraph(&mut self, graph: &GraphProto, node: &str, op: &str, formal: Formal) -> Result<Subgraph> {
        let scope = self.defined.len();
        let saved_nodes = std::mem::take(&mut self.graph.nodes);
        let formal_ids: Vec<ValueId> = formal.into_iter().map(|(name, ty)| self.add_value(name, ty, None)).collect();
        let result = (|| {
            for (name, data) in initializers(graph, self.side)? {
                self.add_value(name, data.tensor_type(), Some(data));
            }
            for index in crate::order::execution_order(graph, |name| self.names.contains_key(name))? {
                self.add_node(&graph.node[index], index)?;
            }
            graph
                .output
                .iter()
                .map(|o| {
                    self.names.get(o.name()).copied().ok_or_else(|| Error::Node {
                        node: node.to_string(),
                        op: op.into(),
                        message: format!("subgraph output `{}` is not produced", o.name()),
                    })
                })
                .collect::<Result<Vec<_>>>()
        })();
        let nodes = std::mem::replace(&mut self.graph.nodes, saved_nodes);
        self.leave_scope(scope);
        Ok((Branch { nodes, outputs: result?, untyped: None }, formal_ids))
    }

    fn branch_choice(&self, node: &str) -> Option<bool> {
        self.choices.get(node).copied()
    }

    fn declared(&self, name: &str) -> Option<&TensorType> {
        self.declared.get(name)
    }

    fn private_value(&mut self, name: String, ty: TensorType) -> ValueId {
        self.graph.values.push(Value { name, ty, constant: None });
        self.graph.values.len() - 1
    }
}
