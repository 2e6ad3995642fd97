//! Model-local functions (`ModelProto.functions`, which PyTorch's exporters emit for modules):
//! every call is replaced by the function's body before the graph is built, in the graph and in
//! every subgraph. The body's formal inputs and outputs become the call's actual names, its
//! other values get a prefix unique to the call, attributes that refer to the function's
//! (`ref_attr_name`) take the call's value or the function's default, and calls inside the body
//! are inlined in turn. Inlined ops keep the model's opset, which is exact because ONNX requires
//! each op of a function to have the same schema under the function's and the model's imports:
//! a function that breaks the rule is an error rather than a guess.

use crate::domain::canonical;
use crate::error::{Error, Result};
use crate::proto::{AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto};
use prost::Message;
use std::collections::{HashMap, HashSet};

/// Most graphs and calls nested in one another: a chain of calls this deep is no exporter's,
/// and the builder recurses once per subgraph level.
const MAX_NESTING: usize = 64;

/// Most nodes that inlining may create: functions calling functions multiply their bodies, so a
/// small hostile model could otherwise ask for billions (or, just under a larger bound, for
/// seconds of renaming from a 1.6 KB file, as the fuzzer found). Still 4× the largest graphs
/// the importer targets (a 28,000-node UNet).
const MAX_INLINED_NODES: usize = 1 << 17;

/// Most bytes (encoded) of bodies that inlining may copy: a body holding a large constant is
/// copied at every call. Exporters keep weights as graph initializers passed in as inputs.
const MAX_INLINED_BYTES: usize = 1 << 28;

/// A few tries at a call's prefix before giving up on names that a model took on purpose.
const MAX_PREFIX_TRIES: usize = 16;

/// `(domain, name, overload)` of a function, the default domain spelled `""`.
type Key<'a> = (&'a str, &'a str, &'a str);

fn key_of_call(node: &NodeProto) -> Key<'_> {
    (canonical(node.domain()), node.op_type(), node.overload())
}

fn key_of_function(function: &FunctionProto) -> Key<'_> {
    (canonical(function.domain()), function.name(), function.overload())
}

fn display(key: Key) -> String {
    let (domain, name, overload) = key;
    let overload = if overload.is_empty() { String::new() } else { format!(" (overload `{overload}`)") };
    format!("{}::{name}{overload}", crate::domain::display(domain))
}

/// Replaces every call of a model-local function in the model's graph by its body. Calls of
/// ops that `keep` selects (user hooks) stay.
pub fn inline_calls(model: &mut ModelProto, keep: &dyn Fn(&NodeProto) -> bool) -> Result<()> {
    if model.functions.is_empty() {
        return Ok(());
    }
    let functions = std::mem::take(&mut model.functions);
    let Some(mut graph) = model.graph.take() else {
        model.functions = functions;
        return Ok(());
    };
    let result = Inliner::new(model, &functions, &graph, keep).and_then(|mut inliner| {
        inliner.check_expanded_size(&graph)?;
        inliner.graph(&mut graph, 0)
    });
    model.graph = Some(graph);
    model.functions = functions;
    result
}

struct Inliner<'a> {
    functions: HashMap<Key<'a>, &'a FunctionProto>,
    keep: &'a dyn Fn(&NodeProto) -> bool,
    /// The model's default-domain opset, when it imports one.
    opset: Option<i64>,
    /// Functions whose opset imports were found compatible with the model's.
    checked: HashSet<Key<'a>>,
    /// Functions being inlined, outermost first: a call of one of them is a recursion.
    active: Vec<Key<'a>>,
    /// Every value name of the model and of the bodies inlined so far.
    taken: HashSet<String>,
    nodes: usize,
    bytes: usize,
}

impl<'a> Inliner<'a> {
    fn new(
        model: &ModelProto,
        functions: &'a [FunctionProto],
        graph: &GraphProto,
        keep: &'a dyn Fn(&NodeProto) -> bool,
    ) -> Result<Self> {
        let mut by_key = HashMap::new();
        for function in functions {
            if by_key.insert(key_of_function(function), function).is_some() {
                return Err(function_error(key_of_function(function), "is defined twice".into()));
            }
        }
        let opset = model.opset_import.iter().find(|o| crate::domain::is_default(o.domain())).map(|o| o.version());
        let mut taken = HashSet::new();
        graph_names(graph, &mut |name| {
            taken.insert(name.to_string());
        });
        Ok(Self { functions: by_key, keep, opset, checked: HashSet::new(), active: vec![], taken, nodes: 0, bytes: 0 })
    }

    /// Refuses, before copying anything, a graph whose inlined form would have more than
    /// MAX_INLINED_NODES nodes: calls that multiply (each body calling the next several times)
    /// grow exponentially, and building them up to the bound would take seconds.
    fn check_expanded_size(&self, graph: &GraphProto) -> Result<()> {
        let mut sizes = HashMap::new();
        if self.expanded_nodes(&graph.node, &mut sizes, &mut vec![]) <= MAX_INLINED_NODES {
            return Ok(());
        }
        let largest = sizes.iter().max_by_key(|&(key, size)| (*size, std::cmp::Reverse(*key))).map(|(&key, _)| key);
        Err(Error::Function {
            function: largest.map_or_else(String::new, display),
            message: format!("inlining would make more than {MAX_INLINED_NODES} nodes"),
        })
    }

    /// Nodes of `nodes` once every call in them (subgraphs included) is inlined, saturating;
    /// `sizes` memoizes each function's, `visiting` holds the functions being sized (a call back
    /// into one of them counts nothing here: the inliner reports the recursion).
    fn expanded_nodes(
        &self,
        nodes: &[NodeProto],
        sizes: &mut HashMap<Key<'a>, usize>,
        visiting: &mut Vec<Key<'a>>,
    ) -> usize {
        let mut total = 0usize;
        for node in nodes {
            let callee = self.functions.get(&key_of_call(node)).copied().filter(|_| !(self.keep)(node));
            let size = match callee {
                None => node
                    .attribute
                    .iter()
                    .flat_map(|a| a.g.iter().chain(&a.graphs))
                    .fold(1usize, |n, g| n.saturating_add(self.expanded_nodes(&g.node, sizes, visiting))),
                Some(function) => {
                    let key = key_of_function(function);
                    match sizes.get(&key) {
                        Some(&size) => size,
                        None if visiting.contains(&key) => 0,
                        // Deeper than the inliner goes: it refuses the nesting.
                        None if visiting.len() > MAX_NESTING => usize::MAX,
                        None => {
                            visiting.push(key);
                            let size = self.expanded_nodes(&function.node, sizes, visiting);
                            visiting.pop();
                            sizes.insert(key, size);
                            size
                        }
                    }
                }
            };
            total = total.saturating_add(size);
        }
        total
    }

    fn graph(&mut self, graph: &mut GraphProto, depth: usize) -> Result<()> {
        if depth > MAX_NESTING {
            return Err(Error::Function {
                function: self.active.last().map_or_else(String::new, |&k| display(k)),
                message: format!("graphs and function calls nest more than {MAX_NESTING} deep"),
            });
        }
        let nodes = std::mem::take(&mut graph.node);
        graph.node = self.nodes(nodes, depth)?;
        Ok(())
    }

    fn nodes(&mut self, nodes: Vec<NodeProto>, depth: usize) -> Result<Vec<NodeProto>> {
        let mut out = Vec::with_capacity(nodes.len());
        for mut node in nodes {
            let callee = self.functions.get(&key_of_call(&node)).copied().filter(|_| !(self.keep)(&node));
            let Some(function) = callee else {
                for attr in &mut node.attribute {
                    for graph in attr.g.iter_mut().chain(&mut attr.graphs) {
                        self.graph(graph, depth + 1)?;
                    }
                }
                out.push(node);
                continue;
            };
            let key = key_of_function(function);
            if self.active.contains(&key) {
                return Err(function_error(key, "calls itself (directly or through other functions)".into()));
            }
            self.check_opset(function)?;
            let body = self.instantiate(&node, function)?;
            self.active.push(key);
            let expanded = self.nodes(body, depth + 1);
            self.active.pop();
            out.extend(expanded?);
        }
        Ok(out)
    }

    /// ONNX's rule for a function's opset imports (its checker's): each default-domain op of the
    /// body has the same schema version under the function's opset as under the model's.
    fn check_opset(&mut self, function: &'a FunctionProto) -> Result<()> {
        let key = key_of_function(function);
        let own = function.opset_import.iter().find(|o| crate::domain::is_default(o.domain())).map(|o| o.version());
        let (Some(model), Some(own)) = (self.opset, own) else { return Ok(()) };
        if model == own || self.checked.contains(&key) {
            return Ok(());
        }
        let mut conflict = None;
        nodes_deep(&function.node, &mut |node| {
            let since = |opset: i64| {
                crate::ops::arity::schema(node.op_type(), opset).filter(|s| s.since <= opset).map(|s| s.since)
            };
            if conflict.is_none() && crate::domain::is_default(node.domain()) && since(own) != since(model) {
                conflict = Some(format!(
                    "imports opset {own} of ai.onnx, the model {model}: {} is not the same op under both \
                     (version {} and {}), so the body cannot be inlined",
                    node.op_type(),
                    since(own).map_or("none".into(), |v| v.to_string()),
                    since(model).map_or("none".into(), |v| v.to_string()),
                ));
            }
        });
        match conflict {
            Some(message) => Err(function_error(key, message)),
            None => {
                self.checked.insert(key);
                Ok(())
            }
        }
    }

    /// The function's body for one call: names bound and made unique, attributes resolved.
    fn instantiate(&mut self, call: &NodeProto, function: &FunctionProto) -> Result<Vec<NodeProto>> {
        let key = key_of_function(function);
        if call.input.len() > function.input.len() || call.output.len() > function.output.len() {
            return Err(function_error(
                key,
                format!(
                    "takes {} input(s) and {} output(s), the call `{}` has {} and {}",
                    function.input.len(),
                    function.output.len(),
                    call.name(),
                    call.input.len(),
                    call.output.len()
                ),
            ));
        }
        // An omitted input stays omitted (`""`) inside the body; an omitted output keeps a
        // private name.
        let mut bound: HashMap<&str, &str> = function
            .input
            .iter()
            .enumerate()
            .map(|(i, f)| (f.as_str(), call.input.get(i).map_or("", String::as_str)))
            .collect();
        for (formal, actual) in function.output.iter().zip(&call.output) {
            if !actual.is_empty() {
                bound.insert(formal, actual);
            }
        }
        let prefix = self.prefix(call, function, &bound)?;
        let names = Renamer { bound: &bound, prefix: &prefix };
        self.nodes += function.node.len();
        if self.nodes > MAX_INLINED_NODES {
            return Err(function_error(key, format!("inlining would make more than {MAX_INLINED_NODES} nodes")));
        }
        let mut body = Vec::with_capacity(function.node.len());
        for (index, template) in function.node.iter().enumerate() {
            self.count_bytes(key, template.encoded_len())?;
            let mut node = template.clone();
            node.name = Some(format!("{prefix}{}", crate::order::node_name(template, index)));
            names.node_values(&mut node);
            self.resolve_attributes(&mut node.attribute, call, function, &names)?;
            body.push(node);
        }
        Ok(body)
    }

    fn count_bytes(&mut self, key: Key, bytes: usize) -> Result<()> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > MAX_INLINED_BYTES {
            return Err(function_error(
                key,
                format!("inlining would copy more than {MAX_INLINED_BYTES} bytes of bodies"),
            ));
        }
        Ok(())
    }

    /// Attributes that refer to the function's take the call's value, else the function's
    /// default, else are dropped (the op's own default applies). Subgraphs of the body get its
    /// names; the call's own subgraph attributes keep theirs (they are the caller's).
    fn resolve_attributes(
        &mut self,
        attributes: &mut Vec<AttributeProto>,
        call: &NodeProto,
        function: &FunctionProto,
        names: &Renamer,
    ) -> Result<()> {
        let key = key_of_function(function);
        let mut resolved = Vec::with_capacity(attributes.len());
        for mut attr in std::mem::take(attributes) {
            if attr.ref_attr_name().is_empty() {
                for graph in attr.g.iter_mut().chain(&mut attr.graphs) {
                    names.graph_values(graph);
                    for node in &mut graph.node {
                        self.resolve_attributes(&mut node.attribute, call, function, names)?;
                    }
                }
                resolved.push(attr);
                continue;
            }
            let referred = attr.ref_attr_name();
            let value = call
                .attribute
                .iter()
                .find(|a| a.name() == referred)
                .or_else(|| function.attribute_proto.iter().find(|a| a.name() == referred));
            if let Some(value) = value {
                self.count_bytes(key, value.encoded_len())?;
                resolved.push(AttributeProto { name: attr.name.take(), ..value.clone() });
            }
        }
        *attributes = resolved;
        Ok(())
    }

    /// `{call}/`, or `{call}_{n}/` when that would reuse a name the model has, for the body's
    /// own values; the names it makes are taken from then on.
    fn prefix(&mut self, call: &NodeProto, function: &FunctionProto, bound: &HashMap<&str, &str>) -> Result<String> {
        let base = match (call.name(), call.output.iter().find(|o| !o.is_empty())) {
            ("", Some(output)) => output.as_str(),
            ("", None) => function.name(),
            (name, _) => name,
        };
        let mut own = vec![];
        nodes_deep_names(&function.node, &mut |name| {
            if !bound.contains_key(name) {
                own.push(name.to_string());
            }
        });
        for attempt in 0..MAX_PREFIX_TRIES {
            let prefix = if attempt == 0 { format!("{base}/") } else { format!("{base}_{attempt}/") };
            if own.iter().all(|name| !self.taken.contains(&format!("{prefix}{name}"))) {
                self.taken.extend(own.iter().map(|name| format!("{prefix}{name}")));
                return Ok(prefix);
            }
        }
        Err(function_error(
            key_of_function(function),
            format!("no unique names for the body of call `{base}`: the model uses them all"),
        ))
    }
}

fn function_error(key: Key, message: String) -> Error {
    Error::Function { function: display(key), message }
}

/// The names of one call's body: a formal becomes the call's actual, any other value name is
/// prefixed, `""` (an omitted optional value) stays.
struct Renamer<'a> {
    bound: &'a HashMap<&'a str, &'a str>,
    prefix: &'a str,
}

impl Renamer<'_> {
    fn rename(&self, name: &mut String) {
        if name.is_empty() {
            return;
        }
        *name = match self.bound.get(name.as_str()) {
            Some(actual) => actual.to_string(),
            None => format!("{}{name}", self.prefix),
        };
    }

    fn rename_optional(&self, name: &mut Option<String>) {
        if let Some(name) = name {
            self.rename(name);
        }
    }

    fn node_values(&self, node: &mut NodeProto) {
        node.input.iter_mut().chain(&mut node.output).for_each(|n| self.rename(n));
    }

    /// Every value name a subgraph of the body defines or uses, its nodes' included (their own
    /// subgraphs are renamed as the attributes are resolved).
    fn graph_values(&self, graph: &mut GraphProto) {
        for value in graph.input.iter_mut().chain(&mut graph.output).chain(&mut graph.value_info) {
            self.rename_optional(&mut value.name);
        }
        for tensor in &mut graph.initializer {
            self.rename_optional(&mut tensor.name);
        }
        for sparse in &mut graph.sparse_initializer {
            for tensor in sparse.values.iter_mut().chain(&mut sparse.indices) {
                self.rename_optional(&mut tensor.name);
            }
        }
        graph.node.iter_mut().for_each(|node| self.node_values(node));
    }
}

/// Calls `f` on every node of `nodes` and of their subgraphs.
fn nodes_deep<'n>(nodes: &'n [NodeProto], f: &mut dyn FnMut(&'n NodeProto)) {
    for node in nodes {
        f(node);
        for attr in &node.attribute {
            for graph in attr.g.iter().chain(&attr.graphs) {
                nodes_deep(&graph.node, f);
            }
        }
    }
}

/// Calls `f` on every value name of `nodes`, their subgraphs' included.
fn nodes_deep_names<'n>(nodes: &'n [NodeProto], f: &mut dyn FnMut(&'n str)) {
    for node in nodes {
        node.input.iter().chain(&node.output).filter(|n| !n.is_empty()).for_each(|n| f(n));
        for attr in &node.attribute {
            for graph in attr.g.iter().chain(&attr.graphs) {
                graph_names(graph, f);
            }
        }
    }
}

/// Calls `f` on every value name a graph defines or uses, its subgraphs' included.
fn graph_names<'n>(graph: &'n GraphProto, f: &mut dyn FnMut(&'n str)) {
    for value in graph.input.iter().chain(&graph.output).chain(&graph.value_info) {
        f(value.name());
    }
    for tensor in &graph.initializer {
        f(tensor.name());
    }
    for sparse in &graph.sparse_initializer {
        for tensor in sparse.values.iter().chain(&sparse.indices) {
            f(tensor.name());
        }
    }
    nodes_deep_names(&graph.node, f);
}
