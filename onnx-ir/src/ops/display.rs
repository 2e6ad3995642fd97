//! The IR graph as text, for `dump` and debugging.

use super::{Graph, ValueId};
use std::fmt;

/// A readable text form of the graph, for `dump` and debugging.
impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "graph (opset {})", self.opset)?;
        for &id in &self.inputs {
            writeln!(f, "  input  {}: {}", self.values[id].name, self.values[id].ty)?;
        }
        for value in self.values.iter().filter(|v| v.constant.is_some()) {
            writeln!(f, "  const  {}: {}", value.name, value.ty)?;
        }
        for node in &self.nodes {
            let names = |ids: &[Option<ValueId>]| {
                ids.iter()
                    .map(|i| i.map_or("<none>".to_string(), |i| self.values[i].name.clone()))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let outputs: Vec<_> = node.outputs.iter().map(|&o| Some(o)).collect();
            let types: Vec<_> = node.outputs.iter().map(|&o| self.values[o].ty.to_string()).collect();
            writeln!(
                f,
                "  {} = {:?} [{}]({})  -> {}",
                names(&outputs),
                node.op,
                node.name,
                names(&node.inputs),
                types.join(", ")
            )?;
        }
        for &id in &self.outputs {
            writeln!(f, "  output {}: {}", self.values[id].name, self.values[id].ty)?;
        }
        Ok(())
    }
}
