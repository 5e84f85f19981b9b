//! Building a model's initial world ([`WorldSpec`]) with the [`World`]'s own
//! operations, so the initial state is one the kernel could reach:
//!
//! 1. Each ancestor is spawned (an exec'd task), mmaps its anon vmas and
//!    writes every page: the first fault gives each vma a new root anon_vma
//!    (a family of its own).
//! 2. It forks its descendants in the model's shape, in fork order. Each
//!    child, right after its fork, writes `cow` of the pages of each anon vma
//!    (a seeded sample): those become private copies in its own anon_vma, the
//!    rest stay COW-shared with its parent (and inherited by its own children).
//! 3. Every task that maps a file (see [`WorldSpec::maps_file`]) mmaps it
//!    shared and reads every page.

use super::ids::{MmId, SpaceId};
use super::world::{Capacity, World};
use crate::model::WorldSpec;
use rand::SeedableRng;
use rand::seq::index;
use rand_xoshiro::Xoshiro256PlusPlus;

impl Capacity {
    /// Exactly what the model's tasks can ever need: one mm slot per task,
    /// and [`WorldSpec::page_bound`] pages (every task owning every anon page
    /// privately, every file page cached).
    pub fn for_spec(spec: &WorldSpec) -> Capacity {
        Capacity {
            mms: spec.tasks,
            pages: u32::try_from(spec.page_bound()).expect("validated page bound"),
        }
    }
}

impl World {
    /// The model's initial world, its arenas trimmed to size.
    pub fn build(spec: &WorldSpec) -> World {
        World::build_with(spec, Capacity::for_spec(spec))
    }

    /// The initial world with room for more tasks or pages than it starts
    /// with (engines that fork and fault beyond the initial state).
    pub fn build_with(spec: &WorldSpec, cap: Capacity) -> World {
        let files = vec![spec.file_pages; spec.files as usize];
        let mut world = World::new(spec.va_pages, &files, cap);
        world.era = super::era::Era::of(spec);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed);
        let mut order = Vec::with_capacity(spec.tasks as usize);
        for a in 0..spec.ancestors {
            let root = world.spawn();
            for i in 0..spec.anon_vmas {
                let start = spec.anon_vma_start(i);
                world.mmap_anon_at(root, start, spec.pages_per_vma);
                for addr in start..start + spec.pages_per_vma {
                    world
                        .touch(root, addr, true)
                        .expect("capacity covers the model");
                }
            }
            let mut tree: Vec<MmId> = vec![root];
            for k in 1..=spec.descendants_of(a) {
                let child = world.fork(tree[spec.parent_of(k) as usize]);
                write_cow_share(&mut world, spec, child, &mut rng);
                tree.push(child);
            }
            order.extend(tree);
        }
        for f in 0..spec.files {
            let start = spec.file_start(f);
            for (t, &mm) in order.iter().enumerate() {
                if spec.maps_file(t as u32, f) {
                    world.mmap_file_at(mm, start, SpaceId(f), 0, spec.file_pages);
                    for addr in start..start + spec.file_pages {
                        world
                            .touch(mm, addr, false)
                            .expect("capacity covers the model");
                    }
                }
            }
        }
        world.shrink_to_fit();
        world
    }
}

/// The child writes round(cow * pages_per_vma) distinct pages of each anon
/// vma, chosen by the seeded RNG.
fn write_cow_share(world: &mut World, spec: &WorldSpec, child: MmId, rng: &mut Xoshiro256PlusPlus) {
    let n = (spec.cow * f64::from(spec.pages_per_vma)).round() as usize;
    for i in 0..spec.anon_vmas {
        let start = spec.anon_vma_start(i);
        for off in index::sample(rng, spec.pages_per_vma as usize, n) {
            world
                .touch(child, start + off as u32, true)
                .expect("capacity covers the model");
        }
    }
}
