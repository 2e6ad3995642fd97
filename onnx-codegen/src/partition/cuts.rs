//! Where a large graph is cut into parts: along the scopes exporters write into node names
//! (`/down_blocks.0/resnets.1/conv1/Conv` is the `Conv` of `down_blocks.0` › `resnets.1` ›
//! `conv1`), so that a part holds a block of the network and is named after it. A scope that
//! fits the bound is one part; a larger one is cut at its sub-scopes, and neighbouring pieces
//! are packed back together while they fit, so that small scopes do not each become a part;
//! nodes without a finer scope (or names without `/`) are cut by count.

use std::ops::Range;

/// A contiguous run of top-level nodes that becomes one part.
#[derive(Debug, PartialEq)]
pub struct Cut {
    pub nodes: Range<usize>,
    /// What the part is named after: the scope all its nodes share (`down_blocks.0/resnets.1`),
    /// else its largest piece's; empty for nodes outside any scope.
    pub scope: String,
    /// The scopes of its pieces, in order (`/` for nodes outside any).
    pub pieces: Vec<String>,
}

/// The scope of a node name: its `/`-separated segments but the last (the node's own name);
/// none for names without `/`.
fn scope_of(name: &str) -> Vec<&str> {
    let segments: Vec<&str> = name.split('/').filter(|s| !s.is_empty()).collect();
    match segments.split_last() {
        Some((_, scope)) if name.contains('/') => scope.to_vec(),
        _ => vec![],
    }
}

/// Nodes cut so far: their range and the scope of each of its pieces with its node count.
struct Group<'a> {
    nodes: Range<usize>,
    pieces: Vec<(&'a [&'a str], usize)>,
}

impl<'a> Group<'a> {
    fn new(nodes: Range<usize>, scope: &'a [&'a str]) -> Self {
        let pieces = vec![(scope, nodes.len())];
        Self { nodes, pieces }
    }

    fn absorb(&mut self, next: Group<'a>) {
        self.nodes.end = next.nodes.end;
        for (scope, count) in next.pieces {
            match self.pieces.last_mut() {
                Some(last) if last.0 == scope => last.1 += count,
                _ => self.pieces.push((scope, count)),
            }
        }
    }

    /// The scope shared by every piece; if none, the largest piece's (the first of equals).
    fn scope(&self) -> &'a [&'a str] {
        let first = self.pieces[0].0;
        let shared = self
            .pieces
            .iter()
            .fold(first.len(), |n, (s, _)| n.min(s.iter().zip(first).take_while(|(a, b)| a == b).count()));
        if shared > 0 {
            return &first[..shared];
        }
        let largest = self.pieces.iter().rev().max_by_key(|(_, count)| *count);
        largest.map_or(first, |(scope, _)| scope)
    }

    fn into_cut(self) -> Cut {
        let scope = self.scope().join("/");
        let pieces = self.pieces.iter().map(|(s, _)| format!("/{}", s.join("/"))).collect();
        Cut { nodes: self.nodes, scope, pieces }
    }
}

/// Cuts the nodes (given by name) into runs of at most `bound` (at least 1) nodes.
pub fn cuts(names: &[&str], bound: usize) -> Vec<Cut> {
    let scopes: Vec<Vec<&str>> = names.iter().map(|n| scope_of(n)).collect();
    split(&scopes, 0..names.len(), 0, bound.max(1)).into_iter().map(Group::into_cut).collect()
}

/// The nodes of one scope, which all share their first `depth` segments: one group if they fit,
/// else those of its sub-scopes and of the nodes directly in it (by count), packed.
fn split<'a>(scopes: &'a [Vec<&'a str>], nodes: Range<usize>, depth: usize, bound: usize) -> Vec<Group<'a>> {
    let scope = &scopes[nodes.start][..depth];
    if nodes.len() <= bound {
        return vec![Group::new(nodes, scope)];
    }
    let mut pieces = vec![];
    for run in runs(scopes, nodes, depth) {
        if scopes[run.start].len() > depth {
            pieces.extend(split(scopes, run, depth + 1, bound));
        } else {
            pieces
                .extend(run.clone().step_by(bound).map(|start| Group::new(start..(start + bound).min(run.end), scope)));
        }
    }
    pack(pieces, bound)
}

/// Maximal runs of nodes in the same sub-scope at `depth` (or directly in the scope).
fn runs<'a>(scopes: &'a [Vec<&'a str>], nodes: Range<usize>, depth: usize) -> impl Iterator<Item = Range<usize>> + 'a {
    let key = move |i: usize| scopes[i].get(depth);
    let mut start = nodes.start;
    std::iter::from_fn(move || {
        if start == nodes.end {
            return None;
        }
        let end = (start + 1..nodes.end).find(|&i| key(i) != key(start)).unwrap_or(nodes.end);
        Some(std::mem::replace(&mut start, end)..end)
    })
}

/// Neighbouring groups joined while they fit.
fn pack(groups: Vec<Group<'_>>, bound: usize) -> Vec<Group<'_>> {
    let mut packed: Vec<Group> = vec![];
    for group in groups {
        match packed.last_mut() {
            Some(last) if last.nodes.len() + group.nodes.len() <= bound => last.absorb(group),
            _ => packed.push(group),
        }
    }
    packed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per `(scope, count)`, `count` names `<scope>/Op_<i>`.
    fn scoped(scopes: &[(&str, usize)]) -> Vec<String> {
        scopes.iter().flat_map(|&(scope, count)| (0..count).map(move |i| format!("{scope}/Op_{i}"))).collect()
    }

    fn cut(names: &[String], bound: usize) -> Vec<(Range<usize>, String)> {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        cuts(&names, bound).into_iter().map(|c| (c.nodes, c.scope)).collect()
    }

    #[test]
    fn a_scope_is_the_name_less_the_node() {
        assert_eq!(scope_of("/down_blocks.0/resnets.1/conv1/Conv"), ["down_blocks.0", "resnets.1", "conv1"]);
        assert_eq!(scope_of("model/dense/MatMul"), ["model", "dense"]);
        assert!(scope_of("/Shape").is_empty() && scope_of("relu_3").is_empty() && scope_of("").is_empty());
    }

    #[test]
    fn scopes_that_fit_are_packed_and_larger_ones_cut_at_sub_scopes() {
        let model = scoped(&[
            ("/conv_in", 2),
            ("/down_blocks.0/resnets.0", 6),
            ("/down_blocks.0/attentions.0", 5),
            ("/mid_block", 4),
        ]);
        // `down_blocks.0` is cut at its blocks; the small `conv_in` joins the first.
        let cuts = cut(&model, 8);
        assert_eq!(
            cuts,
            [
                (0..8, "down_blocks.0/resnets.0".into()),
                (8..13, "down_blocks.0/attentions.0".into()),
                (13..17, "mid_block".into())
            ]
        );
        // With room for both, the two blocks are one part named after their shared scope.
        assert_eq!(cut(&model, 12)[0..2], [(0..2, "conv_in".into()), (2..13, "down_blocks.0".into())]);
    }

    #[test]
    fn nodes_without_a_finer_scope_are_cut_by_count() {
        let chain: Vec<String> = (0..10).map(|i| format!("relu_{i}")).collect();
        assert_eq!(cut(&chain, 4), [(0..4, String::new()), (4..8, String::new()), (8..10, String::new())]);
        let flat = scoped(&[("/mid_block", 10)]);
        assert_eq!(
            cut(&flat, 4).iter().map(|(r, s)| (r.len(), s.as_str())).collect::<Vec<_>>(),
            [(4, "mid_block"), (4, "mid_block"), (2, "mid_block")]
        );
    }

    #[test]
    fn a_part_of_several_top_level_scopes_is_named_after_its_largest() {
        let model = scoped(&[("", 1), ("/time_embedding", 3), ("/conv_in", 1), ("/down_blocks.0", 9)]);
        let cuts = cut(&model, 9);
        assert_eq!(cuts, [(0..5, "time_embedding".into()), (5..14, "down_blocks.0".into())]);
    }

    #[test]
    fn no_cut_exceeds_the_bound_and_every_node_is_in_one() {
        let mut model = vec![];
        for block in 0..5 {
            for layer in 0..block + 1 {
                let attention = format!("/up_blocks.{block}/attentions.{layer}/transformer_blocks.0");
                model.extend(scoped(&[(&attention, 7 * block + 1), (&format!("/up_blocks.{block}"), block)]));
            }
        }
        for bound in [1, 3, 10, 64] {
            let cuts = cut(&model, bound);
            assert!(cuts.iter().all(|(r, _)| !r.is_empty() && r.len() <= bound), "{bound}: {cuts:?}");
            let ends: Vec<usize> = cuts.iter().map(|(r, _)| r.end).collect();
            let starts: Vec<usize> = cuts.iter().map(|(r, _)| r.start).collect();
            assert_eq!((starts[0], &starts[1..], *ends.last().unwrap()), (0, &ends[..ends.len() - 1], model.len()));
        }
    }
}
