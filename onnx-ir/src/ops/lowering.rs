//! Which nodes are lowered at import into IR ops (ONNX Runtime's `com.microsoft` ops, the
//! `ai.onnx.ml` and `ai.onnx.preview.training` ops), and the family that lowers each. The plan
//! a lowering returns is in [`lowered`](super::lowered), a leaf module the families share.

use super::lowered::Lowered;
use super::{microsoft, ml, training, NodeCtx};
use crate::error::Result;

/// Whether a node of this domain and op type is lowered at import.
pub fn lowers(domain: &str, op_type: &str) -> bool {
    microsoft::lowers(domain, op_type) || ml::lowers(domain, op_type) || training::lowers(domain, op_type)
}

/// Whether the node's `ctx.opset` is the model's opset of its own domain (ONNX's versioned
/// domains) rather than the default domain's (ONNX Runtime's contrib ops are unversioned).
pub fn versioned_domain(domain: &str) -> bool {
    domain == ml::DOMAIN || domain == training::DOMAIN
}

/// The node, of `domain`, as IR ops.
pub fn lower(domain: &str, ctx: &NodeCtx) -> Result<Lowered> {
    if ml::lowers(domain, ctx.op_type) {
        ml::lower(ctx)
    } else if training::lowers(domain, ctx.op_type) {
        training::lower(ctx)
    } else {
        microsoft::lower(ctx)
    }
}
