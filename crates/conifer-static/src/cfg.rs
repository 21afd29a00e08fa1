//! Control-flow graph facts the structure tree needs, computed on block indices (0 = entry):
//! dominators, post-dominators and natural loops (back edges to a dominating header).

/// A function's control-flow graph: successors and predecessors of every block.
pub struct Cfg {
    /// Successors of each block (unwind edges left out).
    pub succs: Vec<Vec<usize>>,
    /// Predecessors of each block.
    pub preds: Vec<Vec<usize>>,
}

/// A natural loop: its header, its blocks, and the blocks outside it that it branches to.
pub struct Loop {
    /// The block every iteration starts in.
    pub header: usize,
    /// `contains[b]`: block `b` belongs to the loop (nested loops included).
    pub contains: Vec<bool>,
    /// Blocks outside the loop with a predecessor inside it, in block order.
    pub exits: Vec<usize>,
    /// The unique block outside the loop that branches to the header, if there is one and
    /// it has no other successor (the loop's preheader after `loop-simplify`).
    pub preheader: Option<usize>,
    /// Number of loops this one is nested in.
    pub depth: usize,
}

impl Cfg {
    /// Builds the graph from successor lists.
    pub fn new(succs: Vec<Vec<usize>>) -> Cfg {
        let mut preds = vec![Vec::new(); succs.len()];
        for (b, ss) in succs.iter().enumerate() {
            for &s in ss {
                if !preds[s].contains(&b) {
                    preds[s].push(b);
                }
            }
        }
        Cfg { succs, preds }
    }

    /// Immediate dominator of every block reachable from the entry (`None` for the entry and
    /// for unreachable blocks).
    pub fn idoms(&self) -> Vec<Option<usize>> {
        let n = self.succs.len();
        let succs = |b: usize| self.succs[b].clone();
        let preds = |b: usize| self.preds[b].clone();
        dominators(n, &[0], succs, preds)
    }

    /// Immediate post-dominator of every block (`None` when it is the function's exit, or when
    /// the block cannot reach an exit or its paths share no block before leaving).
    pub fn ipdoms(&self) -> Vec<Option<usize>> {
        let exits: Vec<usize> = (0..self.succs.len())
            .filter(|&b| self.succs[b].is_empty())
            .collect();
        self.ipdoms_to(&exits)
    }

    /// [`Cfg::ipdoms`] with the given blocks as the function's exits (blocks that cannot
    /// reach one have none).
    pub fn ipdoms_to(&self, exits: &[usize]) -> Vec<Option<usize>> {
        let n = self.succs.len();
        // On the reverse graph, a virtual node `n` precedes every exit block.
        let succs = |b: usize| {
            if b == n {
                exits.to_vec()
            } else {
                self.preds[b].clone()
            }
        };
        let preds = |b: usize| {
            let mut p = self.succs[b].clone();
            if exits.contains(&b) {
                p.push(n);
            }
            p
        };
        let idom = dominators(n + 1, &[n], succs, preds);
        idom.into_iter()
            .take(n)
            .map(|d| d.filter(|&d| d != n))
            .collect()
    }

    /// The natural loops, one per header (back edges to one header are merged), outermost
    /// first.
    pub fn loops(&self, idom: &[Option<usize>]) -> Vec<Loop> {
        let n = self.succs.len();
        let dominates = |a: usize, mut b: usize| loop {
            if a == b {
                return true;
            }
            match idom[b] {
                Some(d) => b = d,
                None => return false,
            }
        };
        let mut loops: Vec<Loop> = Vec::new();
        for h in 0..n {
            let latches: Vec<usize> = self.preds[h]
                .iter()
                .copied()
                .filter(|&t| (t == 0 || idom[t].is_some()) && dominates(h, t))
                .collect();
            if latches.is_empty() {
                continue;
            }
            let mut contains = vec![false; n];
            contains[h] = true;
            let mut work = latches.clone();
            while let Some(b) = work.pop() {
                if !contains[b] {
                    contains[b] = true;
                    work.extend(self.preds[b].iter().copied());
                }
            }
            let exits: Vec<usize> = (0..n)
                .filter(|&e| !contains[e] && self.preds[e].iter().any(|&p| contains[p]))
                .collect();
            let outside: Vec<usize> = self.preds[h]
                .iter()
                .copied()
                .filter(|&p| !contains[p])
                .collect();
            let preheader = match outside[..] {
                [p] if self.succs[p].len() == 1 => Some(p),
                _ => None,
            };
            loops.push(Loop {
                header: h,
                contains,
                exits,
                preheader,
                depth: 0,
            });
        }
        let sizes: Vec<usize> = loops
            .iter()
            .map(|l| l.contains.iter().filter(|&&c| c).count())
            .collect();
        for i in 0..loops.len() {
            let h = loops[i].header;
            loops[i].depth = (0..loops.len())
                .filter(|&j| j != i && loops[j].contains[h] && sizes[j] >= sizes[i])
                .count();
        }
        loops.sort_by_key(|l| l.depth);
        loops
    }
}

/// Cooper-Harvey-Kennedy iterative dominators over the nodes reachable from `roots` (one
/// root; the reverse graph passes its virtual exit).
fn dominators(
    n: usize,
    roots: &[usize],
    succs: impl Fn(usize) -> Vec<usize>,
    preds: impl Fn(usize) -> Vec<usize>,
) -> Vec<Option<usize>> {
    // Reverse post-order by an explicit-stack DFS.
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for &r in roots {
        let mut stack = vec![(r, succs(r), 0usize)];
        seen[r] = true;
        while let Some((b, ss, i)) = stack.last_mut() {
            if *i < ss.len() {
                let s = ss[*i];
                *i += 1;
                if !seen[s] {
                    seen[s] = true;
                    let next = succs(s);
                    stack.push((s, next, 0));
                }
            } else {
                order.push(*b);
                stack.pop();
            }
        }
    }
    order.reverse();
    let mut rank = vec![usize::MAX; n];
    for (i, &b) in order.iter().enumerate() {
        rank[b] = i;
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    for &r in roots {
        idom[r] = Some(r);
    }
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().filter(|b| !roots.contains(b)) {
            let mut new: Option<usize> = None;
            for p in preds(b) {
                if rank[p] == usize::MAX || idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(q) => intersect(&idom, &rank, p, q),
                });
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    for &r in roots {
        idom[r] = None;
    }
    idom
}

fn intersect(idom: &[Option<usize>], rank: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while rank[a] > rank[b] {
            a = idom[a].expect("processed node has an idom");
        }
        while rank[b] > rank[a] {
            b = idom[b].expect("processed node has an idom");
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    /// entry -> header <-> body, header -> if -> (then | else) -> join -> exit
    fn sample() -> Cfg {
        Cfg::new(vec![
            vec![1],    // 0 entry
            vec![2, 6], // 1 header
            vec![3, 4], // 2 if
            vec![5],    // 3 then
            vec![5],    // 4 else
            vec![1],    // 5 join / latch
            vec![],     // 6 exit
        ])
    }

    #[test]
    fn dominators_and_postdominators() {
        let cfg = sample();
        let idom = cfg.idoms();
        assert_eq!(
            idom,
            vec![None, Some(0), Some(1), Some(2), Some(2), Some(2), Some(1)]
        );
        let ipdom = cfg.ipdoms();
        assert_eq!(ipdom[2], Some(5));
        assert_eq!(ipdom[1], Some(6));
        assert_eq!(ipdom[6], None);
    }

    #[test]
    fn natural_loop() {
        let cfg = sample();
        let loops = cfg.loops(&cfg.idoms());
        assert_eq!(loops.len(), 1);
        let l = &loops[0];
        assert_eq!(l.header, 1);
        assert_eq!(l.exits, vec![6]);
        assert_eq!(l.preheader, Some(0));
        let body: Vec<usize> = (0..7).filter(|&b| l.contains[b]).collect();
        assert_eq!(body, vec![1, 2, 3, 4, 5]);
    }
}
