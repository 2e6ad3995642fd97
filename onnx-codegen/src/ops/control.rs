use crate::emitter::Emitter;
use crate::error::Result;
use crate::model::emit_nodes;
use onnx_ir::ops::{Branch, IfConfig};
use onnx_ir::Node;
use proc_macro2::TokenStream;
use quote::quote;

/// The statements of a branch and the tuple (or single value) it yields.
/// A branch the rest of the graph cannot take (see [`Branch::untyped`]) panics with the reason.
fn branch(e: &mut Emitter, b: &Branch) -> Result<TokenStream> {
    if let Some(reason) = &b.untyped {
        return Ok(quote! {{ panic!("{}", #reason) }});
    }
    e.enter_branch();
    let body = emit_nodes(e, &b.nodes);
    let outputs = b.outputs.iter().map(|&o| e.use_value(o)).collect::<Result<Vec<_>>>();
    e.leave_branch();
    let (body, mut outputs) = (body?, outputs?);
    let value = if outputs.len() == 1 { outputs.remove(0) } else { quote! { (#(#outputs),*) } };
    Ok(quote! {{ #(#body)* #value }})
}

/// If: a Rust `if` on the condition read back to the host; each branch is a block.
pub fn if_(e: &mut Emitter, node: &Node, c: &IfConfig) -> Result<TokenStream> {
    let condition = e.input(&node.inputs, 0)?;
    let (then_block, else_block) = (branch(e, &c.then_branch)?, branch(e, &c.else_branch)?);
    Ok(quote! { if #condition.into_scalar::<bool>() #then_block else #else_block })
}
