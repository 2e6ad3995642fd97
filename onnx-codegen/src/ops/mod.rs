//! Code generation per op family; each returns the expression computing the node's output.
//! Layers with weights become Burn modules (Conv, Linear, BatchNorm), everything else direct
//! tensor operations.

mod attention;
mod control;
mod conv;
mod custom;
mod detection;
mod elementwise;
mod indexing;
mod linear;
mod loss;
mod low_bit;
mod ml;
mod norm;
mod pool;
mod quantize;
mod random;
mod recurrent;
mod reduce;
mod resize;
mod sequence;
mod shape;
mod signal;
mod softmax;
mod text;
mod tfidf;

use crate::emitter::Emitter;
use crate::error::Result;
use onnx_ir::{Node, Op};
use proc_macro2::TokenStream;
use quote::quote;

/// Code generation of one op, implemented by its payload (`onnx_ir`'s config type) in its
/// family module: the expression computing the node's outputs.
pub(crate) trait EmitOp {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream>;
}

/// The dispatch over every op of `onnx_ir`'s op table: a new op that has no [`EmitOp`] is a
/// compile error here.
macro_rules! emit_op {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident($payload:ty) $(= $($family:ident::$parser:ident[$($name:literal),+]),+)?;
    )*) => {
        fn emit_op(e: &mut Emitter, node: &Node) -> Result<TokenStream> {
            match &node.op {
                $(Op::$variant(config) => config.emit(e, node),)*
            }
        }
    };
}

onnx_ir::op_table!(emit_op);

pub fn emit(e: &mut Emitter, node: &Node) -> Result<TokenStream> {
    if let Some(host) = crate::host_ints::emit(e, node)? {
        return Ok(host);
    }
    emit_op(e, node)
}

/// Refuses a double value read by code that computes in f32 (`what` names it): the result would
/// silently lose double precision, which the import never does (f16 and bf16 lose nothing there).
pub(crate) fn refuse_double(e: &Emitter, dtype: onnx_ir::DType, what: &str) -> Result<()> {
    if dtype == onnx_ir::DType::F64 {
        return Err(e.error(format!("{what} computes in f32: a double input would lose precision")));
    }
    Ok(())
}

/// `x.unsqueeze::<R>()` when `x` has a lower rank than `rank` (numpy aligns on the right).
pub fn align_rank(x: TokenStream, from: usize, rank: usize) -> TokenStream {
    if from < rank {
        let rank = crate::emitter::lit(rank);
        quote::quote! { #x.unsqueeze::<#rank>() }
    } else {
        x
    }
}

/// One `let` per node (a tuple pattern for several outputs; outputs nobody reads are `_`).
pub(crate) fn emit_nodes(e: &mut Emitter, nodes: &[Node]) -> Result<Vec<TokenStream>> {
    let mut body = vec![];
    for node in nodes {
        e.set_node(&node.name, &node.op_type);
        let expr = emit(e, node)?;
        if let [out] = node.outputs[..] {
            let var = e.bind(out);
            body.push(quote! { let #var = #expr; });
        } else {
            let pattern: Vec<TokenStream> = node
                .outputs
                .iter()
                .map(|&o| {
                    if e.is_used(o) {
                        let v = e.bind(o);
                        quote! { #v }
                    } else {
                        quote! { _ }
                    }
                })
                .collect();
            body.push(quote! { let (#(#pattern),*) = #expr; });
        }
    }
    Ok(body)
}
