use super::EmitOp;
use crate::emitter::{creation_options, ints_literal, lit, Emitter};
use crate::error::Result;
use onnx_ir::ops::{
    ConcatConfig, DepthSpaceConfig, EyeLikeConfig, FlattenConfig, ReshapeConfig, ReshapeRuntimeConfig, SqueezeConfig,
    TransposeConfig, UnsqueezeConfig,
};
use onnx_ir::{Kind, Node};
use proc_macro2::TokenStream;
use quote::quote;
use std::ops::Range;

/// `dims[a] * dims[a + 1] * ...` over `range` (or `1` when empty), for a `dims` in scope.
pub fn dims_product(range: Range<usize>) -> TokenStream {
    range
        .map(|i| {
            let i = lit(i);
            quote! { dims[#i] }
        })
        .reduce(|acc, d| quote! { #acc * #d })
        .unwrap_or_else(|| quote! { 1 })
}

pub fn flatten(e: &mut Emitter, node: &Node, axis: usize) -> Result<TokenStream> {
    let rank = e.rank(e.input_id(&node.inputs, 0)?);
    let x = e.input(&node.inputs, 0)?;
    let (rows, cols) = (dims_product(0..axis), dims_product(axis..rank));
    Ok(quote! {{
        let input = #x;
        let dims = input.dims();
        input.reshape([#rows, #cols])
    }})
}

pub fn reshape(e: &mut Emitter, node: &Node, shape: &[i64]) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    if shape.is_empty() {
        return Ok(quote! { #x.reshape([1]) });
    }
    let shape = ints_literal(shape);
    Ok(quote! { #x.reshape(#shape) })
}

pub fn transpose(e: &mut Emitter, node: &Node, perm: &[usize]) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let perm = perm.iter().map(|&p| lit(p));
    Ok(quote! { #x.permute([#(#perm),*]) })
}

pub fn concat(e: &mut Emitter, node: &Node, axis: usize) -> Result<TokenStream> {
    let items = (0..node.inputs.len()).map(|i| e.input(&node.inputs, i)).collect::<Result<Vec<_>>>()?;
    let axis = lit(axis);
    // Float concatenations copy in parallel on flex (the runtime falls back to Burn's elsewhere).
    Ok(match e.ty(node.outputs[0]).dtype.kind() {
        Kind::Float => quote! { burn_onnx::ops::cat(vec![#(#items),*], #axis) },
        _ => quote! { Tensor::cat(vec![#(#items),*], #axis) },
    })
}

pub fn squeeze(e: &mut Emitter, node: &Node, axes: &[usize]) -> Result<TokenStream> {
    let rank = e.rank(node.outputs[0]);
    let x = e.input(&node.inputs, 0)?;
    if rank == 0 {
        return Ok(quote! { #x.reshape([1]) });
    }
    let (rank, axes) = (lit(rank), axes.iter().map(|&a| lit(a)));
    Ok(quote! { #x.squeeze_dims::<#rank>(&[#(#axes),*]) })
}

pub fn unsqueeze(e: &mut Emitter, node: &Node, axes: &[usize]) -> Result<TokenStream> {
    let rank = e.rank(node.outputs[0]);
    let input_rank = e.rank(e.input_id(&node.inputs, 0)?);
    let x = e.input(&node.inputs, 0)?;
    if input_rank == 0 {
        let ones = vec![1usize; rank];
        let dims = crate::emitter::dims_literal(&ones);
        return Ok(quote! { #x.reshape(#dims) });
    }
    let (rank, axes) = (lit(rank), axes.iter().map(|&a| lit(a)));
    Ok(quote! { #x.unsqueeze_dims::<#rank>(&[#(#axes),*]) })
}

pub fn reshape_runtime(e: &mut Emitter, node: &Node, rank: usize, allowzero: bool) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let shape = e.host_ints(e.input_id(&node.inputs, 1)?)?;
    let rank = lit(rank.max(1));
    // Burn's reshape copies the input's dim for a 0 (sizes given as usize too). With allowzero
    // a 0 is an empty dim, and ONNX then forbids -1: the result is an empty tensor of exactly
    // those dims, of an input that must be empty as well.
    let reshape = if allowzero {
        quote! {{
            let x = #x;
            if target.contains(&0) {
                assert_eq!(x.shape().num_elements(), 0, "Reshape: {:?} to {target:?} (allowzero)", x.dims());
                burn::tensor::Tensor::empty(target.map(|d| d as usize), &x.device())
            } else {
                x.reshape(target)
            }
        }}
    } else {
        quote! { #x.reshape(target) }
    };
    Ok(quote! {{
        let shape = #shape;
        let mut target = [0i64; #rank];
        target.iter_mut().zip(&shape).for_each(|(t, &s)| *t = s);
        #reshape
    }})
}

/// DepthToSpace / SpaceToDepth as reshape, permute, reshape.
pub fn depth_space(e: &mut Emitter, node: &Node, block: usize, to_space: bool, crd: bool) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let b = lit(block);
    let body = match (to_space, crd) {
        (true, false) => quote! {
            x.reshape([n, #b, #b, c / (#b * #b), h, w]).permute([0, 3, 4, 1, 5, 2]).reshape([n, c / (#b * #b), h * #b, w * #b])
        },
        (true, true) => quote! {
            x.reshape([n, c / (#b * #b), #b, #b, h, w]).permute([0, 1, 4, 2, 5, 3]).reshape([n, c / (#b * #b), h * #b, w * #b])
        },
        (false, false) => quote! {
            x.reshape([n, c, h / #b, #b, w / #b, #b]).permute([0, 3, 5, 1, 2, 4]).reshape([n, c * #b * #b, h / #b, w / #b])
        },
        (false, true) => quote! {
            x.reshape([n, c, h / #b, #b, w / #b, #b]).permute([0, 1, 3, 5, 2, 4]).reshape([n, c * #b * #b, h / #b, w / #b])
        },
    };
    Ok(quote! {{
        let x = #x;
        let [n, c, h, w] = x.dims();
        #body
    }})
}

pub fn eye_like(e: &mut Emitter, node: &Node, k: i64, dtype: onnx_ir::DType) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let k = proc_macro2::Literal::i64_unsuffixed(k);
    let cast = match dtype.kind() {
        onnx_ir::Kind::Float => quote! {},
        onnx_ir::Kind::Int => quote! { .int() },
        onnx_ir::Kind::Bool => quote! { .bool() },
        onnx_ir::Kind::String => return Err(e.error("EyeLike of strings")),
    };
    let options = creation_options(&quote! { &x.device() }, dtype);
    Ok(quote! {{
        let x = #x;
        let [rows, cols] = x.dims();
        Tensor::<2>::ones([rows, cols], #options).triu(#k).tril(#k) #cast
    }})
}

impl EmitOp for ReshapeRuntimeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let ReshapeRuntimeConfig { rank, allowzero } = self;
        reshape_runtime(e, node, *rank, *allowzero)
    }
}

impl EmitOp for DepthSpaceConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let DepthSpaceConfig { block, to_space, crd } = self;
        depth_space(e, node, *block, *to_space, *crd)
    }
}

impl EmitOp for EyeLikeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let EyeLikeConfig { k, dtype } = self;
        eye_like(e, node, *k, *dtype)
    }
}

impl EmitOp for FlattenConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let FlattenConfig { axis } = self;
        flatten(e, node, *axis)
    }
}

impl EmitOp for ReshapeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let ReshapeConfig { shape } = self;
        reshape(e, node, shape)
    }
}

impl EmitOp for TransposeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let TransposeConfig { perm } = self;
        transpose(e, node, perm)
    }
}

impl EmitOp for ConcatConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let ConcatConfig { axis } = self;
        concat(e, node, *axis)
    }
}

impl EmitOp for SqueezeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let SqueezeConfig { axes } = self;
        squeeze(e, node, axes)
    }
}

impl EmitOp for UnsqueezeConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let UnsqueezeConfig { axes } = self;
        unsqueeze(e, node, axes)
    }
}
