use super::record::{ALL_SERIES, NO_CALLS, NO_FOREIGN, ONE_TERMINAL};
use super::*;
use proptest::prelude::*;
use std::sync::Arc;

/// CYPRESS Figure 5's shape: root { Init(1), loop(2) { arm(3) { Send(4) }, arm(5) { Recv(6) },
/// Barrier(7) }, Finalize(8) }.
fn figure5() -> Arc<Shape> {
    use VertexKind::*;
    Arc::new(
        Shape::new(&[
            (Root, 0),
            (Site, 0),
            (Loop, 0),
            (Branch, 2),
            (Site, 3),
            (Branch, 2),
            (Site, 5),
            (Site, 2),
            (Site, 0),
        ])
        .expect("valid shape"),
    )
}

/// What a run of the tree's calls and refused calls decodes to.
fn decode(b: &TreeBuilder, foreign: &[u32]) -> Vec<u32> {
    let record = b.record();
    let refs: Vec<&VertexRecord> = record.vertices.iter().collect();
    let summaries: Vec<RecordSummary> = refs.iter().map(|r| r.summary()).collect();
    let calls = validate(
        b.shape(),
        &summaries.iter().collect::<Vec<_>>(),
        record.leading_foreign,
        foreign.len() as u64,
        1 << 20,
    )
    .expect("consistent record");
    let out: Vec<u32> = Expand::new(
        b.shape(),
        &refs,
        record.leading_foreign,
        foreign.iter().copied(),
    )
    .collect();
    assert_eq!(out.len() as u64, calls + foreign.len() as u64);
    out
}

#[test]
fn figure5_run_is_recorded_per_vertex_and_decodes_in_order() {
    let mut b = TreeBuilder::new(figure5(), 4);
    let mut expected = Vec::new();
    let mut call = |b: &mut TreeBuilder, site: u32, t: u32| {
        assert!(b.call(Some(site), t));
        expected.push(t);
    };
    call(&mut b, 1, 100);
    for i in 0..6 {
        assert!(b.activate(2));
        if i % 2 == 0 {
            assert!(b.activate(3));
            call(&mut b, 4, 101);
        } else {
            assert!(b.activate(5));
            call(&mut b, 6, 102);
        }
        call(&mut b, 7, 103);
    }
    b.leave(2);
    call(&mut b, 8, 104);
    let r = b.record();
    // Hand-derived: the loop ran 6 iterations in its one entry; arm 3 was taken in
    // iterations 0, 2, 4 and arm 5 in 1, 3, 5; the barrier ran once per iteration.
    assert!(r.vertices[2].counts.iter().eq([6]));
    assert!(r.vertices[3].counts.iter().eq([1, 0, 1, 0, 1, 0]));
    assert!(r.vertices[5].counts.iter().eq([0, 1, 0, 1, 0, 1]));
    assert!(r.vertices[7].counts.iter().eq([1; 6]));
    assert!(r.vertices[4].terminals.iter().eq([101; 3]));
    assert_eq!(r.vertices[3].counts.size(), 2, "one cycle, used once");
    assert_eq!(r.leading_foreign, 0);
    assert_eq!(decode(&b, &[]), expected);
}

#[test]
fn calls_outside_the_tree_keep_their_place() {
    let mut b = TreeBuilder::new(figure5(), 4);
    assert!(!b.call(None, 50)); // before the first tree call
    assert!(b.call(Some(1), 100));
    assert!(!b.call(None, 51));
    assert!(!b.call(None, 52));
    assert!(b.activate(2));
    assert!(b.call(Some(7), 103));
    assert!(!b.call(Some(2), 53)); // a loop is not a call site
    assert!(b.call(Some(8), 104));
    // Going back to the root's first child is not something the walk can reproduce.
    assert!(!b.call(Some(1), 54));
    assert_eq!(
        decode(&b, &[50, 51, 52, 53, 54]),
        vec![50, 100, 51, 52, 103, 53, 104, 54]
    );
}

#[test]
fn out_of_order_calls_open_a_new_activation_of_their_parent() {
    // Inside one iteration (no hook for the next), Barrier then Send: the walk must place
    // Send in a new iteration of the loop.
    let mut b = TreeBuilder::new(figure5(), 4);
    assert!(b.activate(2));
    assert!(b.call(Some(7), 1));
    assert!(b.call(Some(4), 2));
    assert!(b.call(Some(7), 3));
    assert!(b.call(Some(7), 4));
    assert!(b.record().vertices[2].counts.iter().eq([2]));
    assert_eq!(decode(&b, &[]), vec![1, 2, 3, 4]);
}

#[test]
fn iterations_without_calls_are_not_activations() {
    // 10 loop iterations as the hooks report them (plus the header's final test); only the
    // even ones take arm 3 and call; the same arm taken in consecutive active iterations
    // opens once per iteration.
    let mut b = TreeBuilder::new(figure5(), 4);
    for i in 0..11 {
        assert!(b.activate(2));
        if i % 2 == 0 && i < 10 {
            assert!(b.activate(3));
            assert!(b.call(Some(4), 7));
        }
    }
    b.leave(2);
    let r = b.record();
    assert!(r.vertices[2].counts.iter().eq([5]));
    assert!(r.vertices[3].counts.iter().eq([1; 5]));
    assert!(r.vertices[5].counts.iter().eq([0; 5]));
    assert_eq!(decode(&b, &[]), vec![7; 5]);
}

/// A random shape of up to `n` vertices: parents drawn below each id, never a call site.
fn random_shape(parents: &[(u8, usize)]) -> Arc<Shape> {
    let mut vertices = vec![(VertexKind::Root, 0u32)];
    for &(kind, p) in parents {
        let candidates: Vec<u32> = (0..vertices.len() as u32)
            .filter(|&v| vertices[v as usize].0 != VertexKind::Site)
            .collect();
        let parent = candidates[p % candidates.len()];
        let kind = [VertexKind::Loop, VertexKind::Branch, VertexKind::Site][kind as usize % 3];
        vertices.push((kind, parent));
    }
    Arc::new(Shape::new(&vertices).expect("valid random shape"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Whatever the hooks and calls report, decoding gives back every call in order.
    #[test]
    fn any_event_sequence_decodes_to_the_calls_made(
        parents in proptest::collection::vec((0u8..3, 0usize..64), 1..24),
        events in proptest::collection::vec((0u8..4, 0u32..32, 0u32..5), 0..300),
        window in 1usize..4,
    ) {
        let shape = random_shape(&parents);
        let n = shape.len() as u32;
        let mut b = TreeBuilder::new(Arc::clone(&shape), window);
        let (mut expected, mut foreign) = (Vec::new(), Vec::new());
        for (kind, v, t) in events {
            let v = v % (n + 1); // n itself: an unknown id
            match kind {
                0 => { b.activate(v); }
                1 => b.leave(v),
                _ => {
                    let site = (kind == 2).then_some(v);
                    if !b.call(site, t) {
                        foreign.push(t);
                    }
                    expected.push(t);
                }
            }
        }
        prop_assert_eq!(decode(&b, &foreign), expected);
    }

    /// A loop whose body repeats regularly costs O(1) segments whatever its length.
    #[test]
    fn regular_loops_stay_small(iterations in 10u32..2000) {
        let mut b = TreeBuilder::new(figure5(), 4);
        b.call(Some(1), 0);
        for i in 0..iterations {
            b.activate(2);
            if i % 3 == 0 {
                b.activate(3);
                b.call(Some(4), 1);
            } else {
                b.activate(5);
                b.call(Some(6), 2);
            }
            b.call(Some(7), 3);
        }
        b.leave(2);
        b.call(Some(8), 4);
        let r = b.record();
        let segments: usize = r
            .vertices
            .iter()
            .map(|v| v.counts.size() + v.terminals.size())
            .sum();
        prop_assert!(segments <= 60, "{} segments", segments);
    }
}

#[test]
fn records_round_trip_and_rename() {
    let mut b = TreeBuilder::new(figure5(), 4);
    for _ in 0..5 {
        b.activate(2);
        b.call(Some(7), 3);
    }
    let r = b.record();
    for v in &r.vertices {
        let mut out = Vec::new();
        v.encode(&mut out);
        let mut bytes = out.as_slice();
        assert_eq!(&VertexRecord::decode(&mut bytes).expect("decodes"), v);
        assert!(bytes.is_empty());
    }
    let renamed = r.vertices[7].clone().map_terminals(|t| t + 10);
    assert!(renamed.terminals.iter().eq([13; 5]));
}

/// Record forms decode to the record built, and the short forms are what a loop vertex and a
/// call site repeating one signature get: a loop run once for 5 iterations costs its form
/// byte and `CONSTANT, 5, 1` (one count per activation of the root); the site in it, one call
/// per iteration with terminal 3, its form byte and `1, 5, 3`.
#[test]
fn short_record_forms_round_trip() {
    let mut b = TreeBuilder::new(figure5(), 4);
    let mut quiet = TreeBuilder::new(figure5(), 4);
    for i in 0..5 {
        b.activate(2);
        b.call(Some(7), 3);
        quiet.activate(2);
        quiet.call(Some(7), 3);
        if i == 4 {
            // A call without a site goes to the grammar, after the site's fifth call.
            assert!(!b.call(None, 9));
        }
    }
    let (r, q) = (b.record(), quiet.record());
    let encoded = |v: &VertexRecord| {
        let mut out = Vec::new();
        v.encode(&mut out);
        let mut bytes = out.as_slice();
        assert_eq!(&VertexRecord::decode(&mut bytes).expect("decodes"), v);
        assert!(bytes.is_empty());
        out
    };
    assert_eq!(encoded(&q.vertices[2]), [NO_CALLS, 0, 5, 1]);
    assert_eq!(encoded(&q.vertices[7]), [ONE_TERMINAL, 1, 5, 3]);
    assert_eq!(encoded(&r.vertices[7])[0], ALL_SERIES);
    assert!(r.vertices[7].foreign.iter().eq([0, 0, 0, 0, 1]));
}

/// A call site with two terminals and no foreign calls takes the counts-and-terminals form.
#[test]
fn site_with_two_terminals_keeps_its_series() {
    let mut b = TreeBuilder::new(figure5(), 4);
    for i in 0..4 {
        b.activate(2);
        b.call(Some(7), 3 + i % 2);
    }
    let record = &b.record().vertices[7];
    let mut out = Vec::new();
    record.encode(&mut out);
    assert_eq!(out[0], NO_FOREIGN);
    let mut bytes = out.as_slice();
    assert_eq!(&VertexRecord::decode(&mut bytes).expect("decodes"), record);
    assert!(record.terminals.iter().eq([3, 4, 3, 4]));
}
