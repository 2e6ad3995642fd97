use super::EmitOp;
use crate::emitter::{dims_literal, ints_literal, lit, variant, Emitter};
use crate::error::Result;
use onnx_ir::ops::TfIdfConfig;
use onnx_ir::Node;
use proc_macro2::{Literal, TokenStream};
use quote::quote;

/// TfIdfVectorizer on the host (`burn_onnx::ops::tfidf_vectorizer`), its attributes as literals.
pub fn tfidf_vectorizer(e: &mut Emitter, node: &Node, c: &TfIdfConfig) -> Result<TokenStream> {
    let x = e.input(&node.inputs, 0)?;
    let mode = variant(c.mode);
    let (min, max, skip) = (lit(c.min_gram_length), lit(c.max_gram_length), lit(c.max_skip_count));
    let (pool, counts, indexes) =
        (ints_literal(&c.pool), dims_literal(&c.ngram_counts), dims_literal(&c.ngram_indexes));
    let weights = c.weights.iter().map(|&w| match w {
        w if w.is_nan() => quote! { f32::NAN },
        w if w.is_infinite() && w > 0.0 => quote! { f32::INFINITY },
        w if w.is_infinite() => quote! { f32::NEG_INFINITY },
        w => {
            let w = Literal::f32_unsuffixed(w);
            quote! { #w }
        }
    });
    Ok(quote! {
        burn_onnx::ops::tfidf_vectorizer(#x, &burn_onnx::ops::TfIdf {
            mode: burn_onnx::ops::TfIdfMode::#mode,
            min_gram_length: #min,
            max_gram_length: #max,
            max_skip_count: #skip,
            pool: &#pool,
            ngram_counts: &#counts,
            ngram_indexes: &#indexes,
            weights: &[#(#weights),*],
        })
    })
}

impl EmitOp for TfIdfConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        tfidf_vectorizer(e, node, self)
    }
}
