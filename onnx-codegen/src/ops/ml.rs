use super::EmitOp;
use crate::emitter::{float_literal, lit, Emitter};
use crate::error::Result;
use onnx_ir::ops::ml::{
    CastMapConfig, CastTo, DictVectorizerConfig, SvmProbabilitiesConfig, TreeChild, TreeEnsembleConfig, ZipMapConfig,
};
use onnx_ir::ops::text::Labels;
use onnx_ir::Node;
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

fn child(c: TreeChild) -> TokenStream {
    match c {
        TreeChild::Node(i) => {
            let i = lit(i);
            quote! { burn_onnx::ops::TreeChild::Node(#i) }
        }
        TreeChild::Leaf(i) => {
            let i = lit(i);
            quote! { burn_onnx::ops::TreeChild::Leaf(#i) }
        }
    }
}

/// ai.onnx.ml's tree ensembles on the host (`burn_onnx::ops::tree_ensemble`), its trees as literals.
pub fn tree_ensemble(e: &mut Emitter, node: &Node, c: &TreeEnsembleConfig) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let aggregate = format_ident!("{}", format!("{:?}", c.aggregate));
    let n_targets = lit(c.n_targets);
    let roots = c.roots.iter().map(|&r| child(r));
    let nodes = c.nodes.iter().map(|n| {
        let (feature, mode, split) =
            (lit(n.feature), format_ident!("{}", format!("{:?}", n.mode)), float_literal(n.split));
        let members = n.members.iter().map(|&m| float_literal(m));
        let (missing, if_true, if_false) = (n.missing_tracks_true, child(n.if_true), child(n.if_false));
        quote! {
            burn_onnx::ops::TreeNode {
                feature: #feature,
                mode: burn_onnx::ops::TreeMode::#mode,
                split: #split,
                members: &[#(#members),*],
                missing_tracks_true: #missing,
                if_true: #if_true,
                if_false: #if_false,
            }
        }
    });
    let leaves = c.leaves.iter().map(|weights| {
        let weights = weights.iter().map(|&(target, weight)| {
            let (target, weight) = (lit(target), float_literal(weight));
            quote! { (#target, #weight) }
        });
        quote! { &[#(#weights),*] }
    });
    Ok(quote! {
        burn_onnx::ops::tree_ensemble(#x, &burn_onnx::ops::TreeEnsemble {
            aggregate: burn_onnx::ops::TreeAggregate::#aggregate,
            n_targets: #n_targets,
            roots: &[#(#roots),*],
            nodes: &[#(#nodes),*],
            leaves: &[#(#leaves),*],
        })
    })
}

impl EmitOp for TreeEnsembleConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        tree_ensemble(e, node, self)
    }
}

/// ai.onnx.ml ZipMap: the scores read back, one `burn_onnx::ScoreMap` per row.
impl EmitOp for ZipMapConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let x = e.input(&node.inputs, 0)?;
        Ok(match &self.labels {
            Labels::Strings(labels) => quote! { burn_onnx::ops::zip_map(#x, &[#(#labels),*]) },
            Labels::Ints(labels) => {
                let labels = labels.iter().map(|&v| Literal::i64_suffixed(v));
                quote! { burn_onnx::ops::zip_map(#x, &[#(#labels),*]) }
            }
            Labels::Floats(_) => {
                return Err(crate::error::CodegenError::Unsupported("ZipMap with float labels".into()))
            }
        })
    }
}

/// SVMClassifier's calibration on the host (`burn_onnx::ops::svm_probabilities`).
impl EmitOp for SvmProbabilitiesConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let x = e.input(&node.inputs, 0)?;
        let a = self.prob_a.iter().map(|&v| float_literal(f64::from(v)));
        let b = self.prob_b.iter().map(|&v| float_literal(f64::from(v)));
        let classes = lit(self.classes);
        Ok(quote! { burn_onnx::ops::svm_probabilities(#x, &[#(#a),*], &[#(#b),*], #classes) })
    }
}

/// ai.onnx.ml DictVectorizer on the host (`burn_onnx::ops::dict_vectorize`), the vocabulary as
/// literals of the map's key type.
impl EmitOp for DictVectorizerConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let x = e.input(&node.inputs, 0)?;
        let device = e.device();
        let vocabulary: Vec<TokenStream> = match &self.vocabulary {
            Labels::Strings(v) => v.iter().map(|s| quote! { #s }).collect(),
            Labels::Ints(v) => v
                .iter()
                .map(|&i| {
                    let i = Literal::i64_suffixed(i);
                    quote! { &#i }
                })
                .collect(),
            Labels::Floats(_) => {
                return Err(crate::error::CodegenError::Unsupported("DictVectorizer with float keys".into()))
            }
        };
        Ok(quote! { burn_onnx::ops::dict_vectorize(&#x, &[#(#vocabulary),*], #device) })
    }
}

/// ai.onnx.ml CastMap on the host (`burn_onnx::ops::cast_map_to_*`).
impl EmitOp for CastMapConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let x = e.input(&node.inputs, 0)?;
        let device = e.device();
        let max_map = match self.max_map {
            Some(m) => {
                let m = lit(m);
                quote! { Some(#m) }
            }
            None => quote! { None },
        };
        Ok(match self.cast_to {
            CastTo::Float => quote! { burn_onnx::ops::cast_map_to_float(&#x, #max_map, #device) },
            CastTo::Int64 => quote! { burn_onnx::ops::cast_map_to_int(&#x, #max_map, #device) },
            CastTo::String => quote! { burn_onnx::ops::cast_map_to_string(&#x, #max_map) },
        })
    }
}
