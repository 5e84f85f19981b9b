//! The augmented interval tree behind both `anon_vma->rb_root` and
//! `address_space->i_mmap` (the kernel's include/linux/interval_tree_generic.h,
//! instantiated in mm/interval_tree.c).
//!
//! A red-black tree ordered by `start`, each node augmented with the largest
//! `last` in its subtree (the kernel's `rb_subtree_last`), so a stabbing query
//! for every interval that intersects `[start, last]` costs O(log n + k).
//! Intervals are closed: `[vma_start_pgoff, vma_last_pgoff]`.
//!
//! Nodes are not owned by the tree: they live in the caller's arena (the AVC or
//! the file-vma entry carries its own [`TreeNode`]), linked by u32 ids, so the
//! tree costs no memory beyond 24 bytes inside each node and one u32 root.
//! Equal starts go right, so nodes with one key are visited in insertion order,
//! as in the kernel (its insert descends right on ties).
//!
//! Invariants ([`TreeRoot::check`] verifies them): in-order starts are
//! non-decreasing; no red node has a red child; every root-to-leaf path has the
//! same number of black nodes; the root is black; each `subtree_last` is the max
//! `last` of its subtree; parent links mirror child links.

use slab::Slab;

/// The id meaning "no node".
pub const NIL: u32 = u32::MAX;

/// Colour bit inside `parent_color` (the kernel packs the colour into the low
/// bit of `__rb_parent_color`; we pack it into the top bit of a u32 id).
const RED: u32 = 1 << 31;
const PARENT_MASK: u32 = !RED;
/// "No parent" as stored in the 31 parent bits.
const NO_PARENT: u32 = PARENT_MASK;

/// The largest node id a tree can link (ids need 31 bits next to the colour).
pub const MAX_NODE_ID: u32 = NO_PARENT - 1;

/// The key and links one tree node carries: 24 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeNode {
    start: u32,
    last: u32,
    subtree_last: u32,
    left: u32,
    right: u32,
    parent_color: u32,
}

impl TreeNode {
    /// An unlinked node for the closed interval `[start, last]`.
    pub fn new(start: u32, last: u32) -> Self {
        assert!(start <= last, "empty interval [{start}, {last}]");
        TreeNode {
            start,
            last,
            subtree_last: last,
            left: NIL,
            right: NIL,
            parent_color: NO_PARENT,
        }
    }

    pub fn start(&self) -> u32 {
        self.start
    }

    pub fn last(&self) -> u32 {
        self.last
    }

    /// Change the key of a node that is NOT in a tree (remove, re-key, insert:
    /// the kernel's anon_vma_interval_tree_pre/post_update_vma).
    pub fn rekey(&mut self, start: u32, last: u32) {
        *self = TreeNode::new(start, last);
    }

    fn parent(&self) -> u32 {
        match self.parent_color & PARENT_MASK {
            NO_PARENT => NIL,
            p => p,
        }
    }

    fn set_parent(&mut self, p: u32) {
        let p = if p == NIL { NO_PARENT } else { p };
        debug_assert!(p & RED == 0);
        self.parent_color = (self.parent_color & RED) | p;
    }

    fn red(&self) -> bool {
        self.parent_color & RED != 0
    }

    fn set_red(&mut self, red: bool) {
        self.parent_color = (self.parent_color & PARENT_MASK) | if red { RED } else { 0 };
    }
}

/// An arena node that embeds a [`TreeNode`].
pub trait HasNode {
    fn tree_node(&self) -> &TreeNode;
    fn tree_node_mut(&mut self) -> &mut TreeNode;
}

impl HasNode for TreeNode {
    fn tree_node(&self) -> &TreeNode {
        self
    }
    fn tree_node_mut(&mut self) -> &mut TreeNode {
        self
    }
}

/// Where a tree's nodes live, by id.
pub trait Nodes {
    fn node(&self, id: u32) -> &TreeNode;
    fn node_mut(&mut self, id: u32) -> &mut TreeNode;
}

impl<T: HasNode> Nodes for Slab<T> {
    #[inline]
    fn node(&self, id: u32) -> &TreeNode {
        self[id as usize].tree_node()
    }
    #[inline]
    fn node_mut(&mut self, id: u32) -> &mut TreeNode {
        self[id as usize].tree_node_mut()
    }
}

/// One tree: just the id of its root node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeRoot {
    root: u32,
}

impl Default for TreeRoot {
    fn default() -> Self {
        TreeRoot { root: NIL }
    }
}

fn is_red<N: Nodes>(t: &N, n: u32) -> bool {
    n != NIL && t.node(n).red()
}

fn left<N: Nodes>(t: &N, n: u32) -> u32 {
    t.node(n).left
}

fn right<N: Nodes>(t: &N, n: u32) -> u32 {
    t.node(n).right
}

fn parent<N: Nodes>(t: &N, n: u32) -> u32 {
    t.node(n).parent()
}

/// `subtree_last` of `n` from its own `last` and its children's.
fn recompute<N: Nodes>(t: &mut N, n: u32) {
    let node = *t.node(n);
    let mut m = node.last;
    for c in [node.left, node.right] {
        if c != NIL {
            m = m.max(t.node(c).subtree_last);
        }
    }
    t.node_mut(n).subtree_last = m;
}

impl TreeRoot {
    pub fn is_empty(&self) -> bool {
        self.root == NIL
    }

    /// Point `parent`'s link that was `old` at `new` (or the root if no parent).
    fn replace_child<N: Nodes>(&mut self, t: &mut N, parent: u32, old: u32, new: u32) {
        if parent == NIL {
            self.root = new;
        } else if left(t, parent) == old {
            t.node_mut(parent).left = new;
        } else {
            t.node_mut(parent).right = new;
        }
    }

    /// Rotate `x` down to the left; its right child `y` takes its place. The
    /// subtree's node set is unchanged, so `y` inherits `x`'s subtree_last and
    /// only `x` is recomputed (the kernel's augment_rotate callback).
    fn rotate_left<N: Nodes>(&mut self, t: &mut N, x: u32) {
        let y = right(t, x);
        let yl = left(t, y);
        t.node_mut(x).right = yl;
        if yl != NIL {
            t.node_mut(yl).set_parent(x);
        }
        let xp = parent(t, x);
        t.node_mut(y).set_parent(xp);
        self.replace_child(t, xp, x, y);
        t.node_mut(y).left = x;
        t.node_mut(x).set_parent(y);
        t.node_mut(y).subtree_last = t.node(x).subtree_last;
        recompute(t, x);
    }

    /// Mirror of [`rotate_left`](Self::rotate_left).
    fn rotate_right<N: Nodes>(&mut self, t: &mut N, x: u32) {
        let y = left(t, x);
        let yr = right(t, y);
        t.node_mut(x).left = yr;
        if yr != NIL {
            t.node_mut(yr).set_parent(x);
        }
        let xp = parent(t, x);
        t.node_mut(y).set_parent(xp);
        self.replace_child(t, xp, x, y);
        t.node_mut(y).right = x;
        t.node_mut(x).set_parent(y);
        t.node_mut(y).subtree_last = t.node(x).subtree_last;
        recompute(t, x);
    }

    /// Link node `id` (unlinked, its key set) into the tree.
    pub fn insert<N: Nodes>(&mut self, t: &mut N, id: u32) {
        assert!(id <= MAX_NODE_ID, "node id {id} needs more than 31 bits");
        let (start, last) = (t.node(id).start, t.node(id).last);
        *t.node_mut(id) = TreeNode::new(start, last);
        // Descend, raising subtree_last on the way (every ancestor gains `last`).
        let (mut up, mut cur, mut go_left) = (NIL, self.root, false);
        while cur != NIL {
            let n = t.node_mut(cur);
            n.subtree_last = n.subtree_last.max(last);
            up = cur;
            go_left = start < n.start;
            cur = if go_left { n.left } else { n.right };
        }
        t.node_mut(id).set_parent(up);
        t.node_mut(id).set_red(true);
        if up == NIL {
            self.root = id;
        } else if go_left {
            t.node_mut(up).left = id;
        } else {
            t.node_mut(up).right = id;
        }
        self.insert_fixup(t, id);
    }

    fn insert_fixup<N: Nodes>(&mut self, t: &mut N, mut z: u32) {
        loop {
            let mut p = parent(t, z);
            if !is_red(t, p) {
                break;
            }
            // p is red, so it is not the root: g exists.
            let g = parent(t, p);
            let p_is_left = left(t, g) == p;
            let uncle = if p_is_left { right(t, g) } else { left(t, g) };
            if is_red(t, uncle) {
                t.node_mut(p).set_red(false);
                t.node_mut(uncle).set_red(false);
                t.node_mut(g).set_red(true);
                z = g;
                continue;
            }
            if p_is_left {
                if right(t, p) == z {
                    self.rotate_left(t, p);
                    (z, p) = (p, z);
                }
                t.node_mut(p).set_red(false);
                t.node_mut(g).set_red(true);
                self.rotate_right(t, g);
            } else {
                if left(t, p) == z {
                    self.rotate_right(t, p);
                    (z, p) = (p, z);
                }
                t.node_mut(p).set_red(false);
                t.node_mut(g).set_red(true);
                self.rotate_left(t, g);
            }
            let _ = z;
            break;
        }
        let root = self.root;
        t.node_mut(root).set_red(false);
    }

    /// Put subtree `v` where `u` was (v may be NIL).
    fn transplant<N: Nodes>(&mut self, t: &mut N, u: u32, v: u32) {
        let up = parent(t, u);
        self.replace_child(t, up, u, v);
        if v != NIL {
            t.node_mut(v).set_parent(up);
        }
    }

    /// Unlink node `z` (which must be in this tree). Its key is kept.
    pub fn remove<N: Nodes>(&mut self, t: &mut N, z: u32) {
        let (zl, zr) = (left(t, z), right(t, z));
        let (x, x_parent, removed_red);
        if zl == NIL || zr == NIL {
            x = if zl == NIL { zr } else { zl };
            x_parent = parent(t, z);
            removed_red = t.node(z).red();
            self.transplant(t, z, x);
        } else {
            // Two children: z's successor y (leftmost of the right subtree) takes
            // z's place and colour; the fix-up starts where y was.
            let mut y = zr;
            while left(t, y) != NIL {
                y = left(t, y);
            }
            removed_red = t.node(y).red();
            x = right(t, y);
            if parent(t, y) == z {
                x_parent = y;
            } else {
                x_parent = parent(t, y);
                self.transplant(t, y, x);
                t.node_mut(y).right = zr;
                t.node_mut(zr).set_parent(y);
            }
            self.transplant(t, z, y);
            t.node_mut(y).left = zl;
            t.node_mut(zl).set_parent(y);
            let z_red = t.node(z).red();
            t.node_mut(y).set_red(z_red);
        }
        // Every node whose subtree lost z (or gained y) is on x_parent's path up.
        let mut n = x_parent;
        while n != NIL {
            recompute(t, n);
            n = parent(t, n);
        }
        if !removed_red {
            self.delete_fixup(t, x, x_parent);
        }
        let (start, last) = (t.node(z).start, t.node(z).last);
        *t.node_mut(z) = TreeNode::new(start, last);
    }

    /// Restore the black height after a black node left the path through `x`
    /// (x may be NIL, hence its parent is passed explicitly).
    fn delete_fixup<N: Nodes>(&mut self, t: &mut N, mut x: u32, mut xp: u32) {
        while x != self.root && !is_red(t, x) {
            let x_is_left = left(t, xp) == x;
            let sibling = |t: &N| if x_is_left { right(t, xp) } else { left(t, xp) };
            let mut w = sibling(t);
            if is_red(t, w) {
                t.node_mut(w).set_red(false);
                t.node_mut(xp).set_red(true);
                if x_is_left {
                    self.rotate_left(t, xp);
                } else {
                    self.rotate_right(t, xp);
                }
                w = sibling(t);
            }
            let (near, far) = if x_is_left {
                (left(t, w), right(t, w))
            } else {
                (right(t, w), left(t, w))
            };
            if !is_red(t, near) && !is_red(t, far) {
                t.node_mut(w).set_red(true);
                x = xp;
                xp = parent(t, x);
                continue;
            }
            if !is_red(t, far) {
                t.node_mut(near).set_red(false);
                t.node_mut(w).set_red(true);
                if x_is_left {
                    self.rotate_right(t, w);
                } else {
                    self.rotate_left(t, w);
                }
                w = sibling(t);
            }
            let far = if x_is_left { right(t, w) } else { left(t, w) };
            let xp_red = t.node(xp).red();
            t.node_mut(w).set_red(xp_red);
            t.node_mut(xp).set_red(false);
            t.node_mut(far).set_red(false);
            if x_is_left {
                self.rotate_left(t, xp);
            } else {
                self.rotate_right(t, xp);
            }
            x = self.root;
        }
        if x != NIL {
            t.node_mut(x).set_red(false);
        }
    }

    /// Every node whose interval intersects `[start, last]`, in key order.
    pub fn stab<'a, N: Nodes>(&self, t: &'a N, start: u32, last: u32) -> Stab<'a, N> {
        let next = if self.root == NIL || t.node(self.root).subtree_last < start {
            NIL
        } else {
            search(t, self.root, start, last)
        };
        Stab {
            t,
            next,
            start,
            last,
        }
    }

    /// Every node, in key order.
    pub fn iter<'a, N: Nodes>(&self, t: &'a N) -> Stab<'a, N> {
        self.stab(t, 0, u32::MAX)
    }

    /// Verify every invariant in the module doc; the node count on success.
    pub fn check<N: Nodes>(&self, t: &N) -> Result<usize, String> {
        if is_red(t, self.root) {
            return Err("red root".into());
        }
        if self.root != NIL && parent(t, self.root) != NIL {
            return Err("root has a parent".into());
        }
        let mut prev_start = 0;
        let mut count = 0;
        check_subtree(t, self.root, &mut prev_start, &mut count)?;
        Ok(count)
    }
}

/// Black height of `n`'s subtree, checking every invariant below it.
fn check_subtree<N: Nodes>(
    t: &N,
    n: u32,
    prev_start: &mut u32,
    count: &mut usize,
) -> Result<u32, String> {
    if n == NIL {
        return Ok(1);
    }
    let node = *t.node(n);
    for c in [node.left, node.right] {
        if c != NIL && parent(t, c) != n {
            return Err(format!("node {c} does not point back to parent {n}"));
        }
        if node.red() && is_red(t, c) {
            return Err(format!("red node {n} has red child {c}"));
        }
    }
    let lh = check_subtree(t, node.left, prev_start, count)?;
    if node.start < *prev_start {
        return Err(format!("node {n} out of order"));
    }
    *prev_start = node.start;
    *count += 1;
    let rh = check_subtree(t, node.right, prev_start, count)?;
    if lh != rh {
        return Err(format!("black heights differ under node {n}: {lh} vs {rh}"));
    }
    let mut want = node.last;
    for c in [node.left, node.right] {
        if c != NIL {
            want = want.max(t.node(c).subtree_last);
        }
    }
    if node.subtree_last != want {
        return Err(format!(
            "node {n}: subtree_last {} != {want}",
            node.subtree_last
        ));
    }
    Ok(lh + u32::from(!node.red()))
}

/// The leftmost node under `n` intersecting `[start, last]`; the caller
/// guarantees `n`'s subtree_last >= start.
fn search<N: Nodes>(t: &N, mut n: u32, start: u32, last: u32) -> u32 {
    loop {
        let node = t.node(n);
        // Anything intersecting in the left subtree comes first in key order.
        if node.left != NIL && t.node(node.left).subtree_last >= start {
            n = node.left;
            continue;
        }
        if node.start <= last {
            if start <= node.last {
                return n;
            }
            if node.right != NIL && start <= t.node(node.right).subtree_last {
                n = node.right;
                continue;
            }
        }
        // Either this start is past `last` (so is everything after it), or
        // nothing below reaches `start`.
        return NIL;
    }
}

/// A stabbing query in progress (the kernel's interval_tree_iter_first/next).
pub struct Stab<'a, N> {
    t: &'a N,
    next: u32,
    start: u32,
    last: u32,
}

impl<N: Nodes> Stab<'_, N> {
    /// The next intersecting node after `n` in key order.
    fn after(&self, mut n: u32) -> u32 {
        let (t, start, last) = (self.t, self.start, self.last);
        let mut rb = right(t, n);
        loop {
            if rb != NIL && start <= t.node(rb).subtree_last {
                return search(t, rb, start, last);
            }
            // Climb until we arrive from a left child: that ancestor is next in order.
            loop {
                let p = parent(t, n);
                if p == NIL {
                    return NIL;
                }
                let from_right = right(t, p) == n;
                n = p;
                if !from_right {
                    break;
                }
            }
            let node = t.node(n);
            if last < node.start {
                return NIL;
            }
            if start <= node.last {
                return n;
            }
            rb = node.right;
        }
    }
}

impl<N: Nodes> Iterator for Stab<'_, N> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.next == NIL {
            return None;
        }
        let n = self.next;
        self.next = self.after(n);
        Some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u32, u32),
        Remove(usize),
        Stab(u32, u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Small key space so intervals overlap and keys tie often.
        prop_oneof![
            3 => (0u32..40, 0u32..12).prop_map(|(s, len)| Op::Insert(s, s + len)),
            2 => any::<usize>().prop_map(Op::Remove),
            2 => (0u32..50, 0u32..8).prop_map(|(s, len)| Op::Stab(s, s + len)),
        ]
    }

    /// Brute force: every live node intersecting, ordered by (start, insertion).
    fn brute(nodes: &Slab<TreeNode>, order: &[u32], s: u32, l: u32) -> Vec<u32> {
        let mut hits: Vec<(u32, usize, u32)> = order
            .iter()
            .enumerate()
            .map(|(seq, &id)| (nodes[id as usize].start, seq, id))
            .filter(|&(_, _, id)| {
                let n = &nodes[id as usize];
                n.start <= l && s <= n.last
            })
            .collect();
        hits.sort();
        hits.into_iter().map(|(_, _, id)| id).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn matches_brute_force(ops in proptest::collection::vec(op(), 1..200)) {
            let mut nodes: Slab<TreeNode> = Slab::new();
            let mut root = TreeRoot::default();
            let mut order: Vec<u32> = Vec::new(); // live ids, insertion order
            for op in ops {
                match op {
                    Op::Insert(s, l) => {
                        let id = nodes.insert(TreeNode::new(s, l)) as u32;
                        root.insert(&mut nodes, id);
                        order.push(id);
                    }
                    Op::Remove(i) if !order.is_empty() => {
                        let id = order.remove(i % order.len());
                        root.remove(&mut nodes, id);
                        nodes.remove(id as usize);
                    }
                    Op::Remove(_) => {}
                    Op::Stab(s, l) => {
                        let got: Vec<u32> = root.stab(&nodes, s, l).collect();
                        prop_assert_eq!(got, brute(&nodes, &order, s, l));
                    }
                }
                prop_assert_eq!(root.check(&nodes), Ok(order.len()));
            }
        }
    }

    #[test]
    fn equal_keys_are_visited_in_insertion_order() {
        let mut nodes: Slab<TreeNode> = Slab::new();
        let mut root = TreeRoot::default();
        let ids: Vec<u32> = (0..1000)
            .map(|_| {
                let id = nodes.insert(TreeNode::new(5, 9)) as u32;
                root.insert(&mut nodes, id);
                id
            })
            .collect();
        assert_eq!(root.check(&nodes), Ok(1000));
        assert_eq!(root.stab(&nodes, 9, 9).collect::<Vec<_>>(), ids);
        assert_eq!(root.stab(&nodes, 10, 20).count(), 0);
    }

    #[test]
    fn depth_is_logarithmic() {
        // 2^14 sequential inserts: an unbalanced tree would be a 16k-long list.
        let mut nodes: Slab<TreeNode> = Slab::new();
        let mut root = TreeRoot::default();
        for i in 0..(1u32 << 14) {
            let id = nodes.insert(TreeNode::new(i, i)) as u32;
            root.insert(&mut nodes, id);
        }
        let depth = |mut n: u32| {
            let mut d = 0;
            while n != NIL {
                n = parent(&nodes, n);
                d += 1;
            }
            d
        };
        let max = (0..nodes.len() as u32).map(depth).max().unwrap();
        assert!(max <= 2 * 15, "depth {max}");
    }
}
