//! The anon_vma hierarchy and AVC links as a graphviz DOT graph (petgraph).
//!
//! Nodes: anon_vmas (ellipses: tree size and active vmas), the vmas whose
//! own anon_vma each one is (boxes), and summary nodes (dashed notes). Edges:
//! parent -> child anon_vma (solid), vma -> every anon_vma its AVC chain links
//! it to (dashed, one per AVC).
//!
//! Summarised so a 10,000-child storm stays readable: each anon_vma shows at
//! most [`CHILDREN_SHOWN`] children and [`VMAS_SHOWN`] of its vmas, the rest
//! folded into one "N more" node; once [`NODE_BUDGET`] nodes are drawn, whole
//! subtrees and families fold the same way.

use super::family::Family;
use super::ids::{AnonVmaId, FamilyId, MmId};
use super::mm::AnonLink;
use super::world::World;
use petgraph::dot::{Config, Dot};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::BTreeMap;
use std::fmt;

/// Children drawn per anon_vma before the rest fold into one node.
pub const CHILDREN_SHOWN: usize = 4;
/// vmas drawn per anon_vma.
pub const VMAS_SHOWN: usize = 2;
/// Nodes drawn before everything further folds ("a few hundred").
pub const NODE_BUDGET: usize = 300;

enum Node {
    AnonVma {
        family: FamilyId,
        id: AnonVmaId,
        tree: usize,
        active: u32,
    },
    Vma {
        mm: MmId,
        start: u32,
        end: u32,
    },
    More(String),
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::AnonVma {
                family,
                id,
                tree,
                active,
            } => write!(
                f,
                "{family:?} {id:?}\ntree: {tree} avcs\nactive vmas: {active}"
            ),
            Node::Vma { mm, start, end } => write!(f, "{mm:?} vma [{start}, {end})"),
            Node::More(what) => f.write_str(what),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Edge {
    Parent,
    Avc,
    Folded,
}

impl fmt::Display for Edge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Edge::Parent => "child",
            Edge::Avc => "avc",
            Edge::Folded => "",
        })
    }
}

/// One family's hierarchy, indexed for drawing.
struct FamilyView<'a> {
    id: FamilyId,
    f: &'a Family,
    children: BTreeMap<AnonVmaId, Vec<AnonVmaId>>,
    subtree: BTreeMap<AnonVmaId, usize>,
    owners: BTreeMap<AnonVmaId, Vec<(MmId, u32, u32, AnonLink)>>,
}

impl<'a> FamilyView<'a> {
    fn new(id: FamilyId, f: &'a Family, world: &World) -> Self {
        let mut children: BTreeMap<AnonVmaId, Vec<AnonVmaId>> = BTreeMap::new();
        for (av, a) in f.anon_vmas() {
            if av != f.root() {
                children.entry(a.parent()).or_default().push(av);
            }
        }
        let mut owners: BTreeMap<AnonVmaId, Vec<_>> = BTreeMap::new();
        for (mm, m) in world.live_mms() {
            for v in m.vmas() {
                if let Some(l) = v.anon.filter(|l| l.family == id) {
                    owners
                        .entry(l.anon_vma)
                        .or_default()
                        .push((mm, v.start, v.end, l));
                }
            }
        }
        let mut view = FamilyView {
            id,
            f,
            children,
            subtree: BTreeMap::new(),
            owners,
        };
        view.count_subtree(f.root());
        view
    }

    /// anon_vmas in `av`'s subtree, itself included (iterative post-order).
    fn count_subtree(&mut self, av: AnonVmaId) {
        let mut stack = vec![(av, false)];
        while let Some((n, done)) = stack.pop() {
            let kids = self.children.get(&n).cloned().unwrap_or_default();
            if done {
                let size = 1 + kids.iter().map(|k| self.subtree[k]).sum::<usize>();
                self.subtree.insert(n, size);
            } else {
                stack.push((n, true));
                stack.extend(kids.into_iter().map(|k| (k, false)));
            }
        }
    }
}

struct Drawing {
    g: DiGraph<Node, Edge>,
    shown: BTreeMap<(FamilyId, AnonVmaId), NodeIndex>,
}

impl Drawing {
    fn full(&self) -> bool {
        self.g.node_count() >= NODE_BUDGET
    }

    fn more(&mut self, from: NodeIndex, what: String) {
        let n = self.g.add_node(Node::More(what));
        self.g.add_edge(from, n, Edge::Folded);
    }

    /// Draw one family breadth first from its root: each anon_vma, its vmas,
    /// and its first children, folding the rest.
    fn family(&mut self, view: &FamilyView<'_>) {
        let root = view.f.root();
        let mut queue = std::collections::VecDeque::from([root]);
        self.add_anon_vma(view, root);
        while let Some(av) = queue.pop_front() {
            let node = self.shown[&(view.id, av)];
            self.vmas(view, av, node);
            let kids = view.children.get(&av).map_or(&[][..], |k| &k[..]);
            let mut shown = 0;
            for &k in kids {
                if shown == CHILDREN_SHOWN || self.full() {
                    break;
                }
                let child = self.add_anon_vma(view, k);
                self.g.add_edge(node, child, Edge::Parent);
                queue.push_back(k);
                shown += 1;
            }
            let rest = &kids[shown..];
            if !rest.is_empty() {
                let below: usize = rest.iter().map(|k| view.subtree[k]).sum();
                self.more(
                    node,
                    format!(
                        "+{} more children\n({below} anon_vmas in their subtrees)",
                        rest.len()
                    ),
                );
            }
        }
    }

    fn add_anon_vma(&mut self, view: &FamilyView<'_>, av: AnonVmaId) -> NodeIndex {
        let a = view.f.anon_vma(av);
        let n = self.g.add_node(Node::AnonVma {
            family: view.id,
            id: av,
            tree: view.f.stab(av, 0, u32::MAX).count(),
            active: a.num_active_vmas(),
        });
        self.shown.insert((view.id, av), n);
        n
    }

    /// The vmas whose own anon_vma is `av`, each with its AVC links to every
    /// anon_vma drawn so far (ancestors are drawn before descendants).
    fn vmas(&mut self, view: &FamilyView<'_>, av: AnonVmaId, node: NodeIndex) {
        let owners = view.owners.get(&av).map_or(&[][..], |o| &o[..]);
        let mut shown = 0;
        for &(mm, start, end, link) in owners {
            if shown == VMAS_SHOWN || self.full() {
                break;
            }
            let v = self.g.add_node(Node::Vma { mm, start, end });
            for avc in view.f.chain(Some(link.chain)) {
                let target = view.f.avc(avc).anon_vma();
                if let Some(&t) = self.shown.get(&(view.id, target)) {
                    self.g.add_edge(v, t, Edge::Avc);
                }
            }
            shown += 1;
        }
        if owners.len() > shown {
            self.more(node, format!("+{} more vmas", owners.len() - shown));
        }
    }
}

/// The DOT text of `world`'s anon_vma hierarchies.
pub fn hierarchy_dot(world: &World) -> String {
    let mut d = Drawing {
        g: DiGraph::new(),
        shown: BTreeMap::new(),
    };
    let families: Vec<_> = world.live_families().collect();
    let mut drawn = 0;
    for &(id, f) in &families {
        if d.full() {
            break;
        }
        d.family(&FamilyView::new(id, f, world));
        drawn += 1;
    }
    if drawn < families.len() {
        let rest: usize = families[drawn..]
            .iter()
            .map(|(_, f)| f.anon_vma_count())
            .sum();
        d.g.add_node(Node::More(format!(
            "+{} more families\n({rest} anon_vmas)",
            families.len() - drawn
        )));
    }
    let edge_attr = |_, e: petgraph::graph::EdgeReference<'_, Edge>| {
        match e.weight() {
            Edge::Parent => "",
            Edge::Avc => "style = dashed, color = gray40",
            Edge::Folded => "style = dotted",
        }
        .to_string()
    };
    let node_attr = |_, (_, n): (NodeIndex, &Node)| {
        match n {
            Node::AnonVma { .. } => "shape = ellipse",
            Node::Vma { .. } => "shape = box",
            Node::More(_) => "shape = note, style = dashed",
        }
        .to_string()
    };
    let dot = Dot::with_attr_getters(&d.g, &[Config::EdgeNoLabel], &edge_attr, &node_attr);
    format!("{dot}")
}
