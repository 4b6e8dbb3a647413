//! One conformance suite, run against every engine (`MemEngine` here, RocksDB in `kv-rocks`).

use crate::{prefix_end, KvEngine, WriteBatch};

type Factory<'a> = &'a dyn Fn() -> Box<dyn KvEngine>;

pub fn run_all(make: Factory<'_>) {
    put_get_delete(make().as_ref());
    batch_is_atomic_and_ordered(make().as_ref());
    scans_are_ordered_and_bounded(make().as_ref());
    prefix_scans_visit_each_prefix(make().as_ref());
    delete_range(make().as_ref());
    multi_get(make().as_ref());
    binary_keys(make().as_ref());
    buffered_writes_are_visible_before_sync(make().as_ref());
    compaction_filter_drops_only_in_range(make().as_ref());
    ingest_sorted_overwrites_and_shadows(make().as_ref());
}

fn collect(e: &dyn KvEngine, prefix: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    e.scan_prefix(prefix, &mut |k, v| {
        out.push((k.to_vec(), v.to_vec()));
        true
    })
    .unwrap();
    out
}

fn put_get_delete(e: &dyn KvEngine) {
    assert_eq!(e.get(b"a").unwrap(), None);
    let mut b = WriteBatch::new();
    b.put(b"a".to_vec(), b"1".to_vec());
    e.write(b).unwrap();
    assert_eq!(e.get(b"a").unwrap(), Some(b"1".to_vec()));
    let mut b = WriteBatch::new();
    b.put(b"a".to_vec(), b"2".to_vec());
    e.write(b).unwrap();
    assert_eq!(e.get(b"a").unwrap(), Some(b"2".to_vec()), "a put overwrites");
    let mut b = WriteBatch::new();
    b.delete(b"a".to_vec());
    e.write(b).unwrap();
    assert_eq!(e.get(b"a").unwrap(), None);
}

fn batch_is_atomic_and_ordered(e: &dyn KvEngine) {
    let mut b = WriteBatch::new();
    b.put(b"k".to_vec(), b"first".to_vec());
    b.delete(b"k".to_vec());
    b.put(b"k".to_vec(), b"last".to_vec());
    b.put(b"other".to_vec(), b"x".to_vec());
    e.write(b).unwrap();
    assert_eq!(e.get(b"k").unwrap(), Some(b"last".to_vec()), "ops in a batch apply in order");
    assert_eq!(e.get(b"other").unwrap(), Some(b"x".to_vec()));
}

fn scans_are_ordered_and_bounded(e: &dyn KvEngine) {
    let mut b = WriteBatch::new();
    for k in [&b"p\x02"[..], b"p\x01", b"p\x01\x00", b"q", b"o\xff", b"p"] {
        b.put(k.to_vec(), k.to_vec());
    }
    e.write(b).unwrap();
    let keys: Vec<Vec<u8>> = collect(e, b"p").into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, vec![b"p".to_vec(), b"p\x01".to_vec(), b"p\x01\x00".to_vec(), b"p\x02".to_vec()]);
    let mut seen = 0;
    e.scan_prefix(b"p", &mut |_, _| {
        seen += 1;
        seen < 2
    })
    .unwrap();
    assert_eq!(seen, 2, "returning false stops the scan");
    let mut range = Vec::new();
    e.scan_range(b"p\x01", b"p\x02", &mut |k, _| {
        range.push(k.to_vec());
        true
    })
    .unwrap();
    assert_eq!(range, vec![b"p\x01".to_vec(), b"p\x01\x00".to_vec()], "end is exclusive");
    for (start, end) in [(&b"p\x02"[..], &b"p\x01"[..]), (b"p\x01", b"p\x01")] {
        let mut seen = 0;
        e.scan_range(start, end, &mut |_, _| {
            seen += 1;
            true
        })
        .unwrap();
        assert_eq!(seen, 0, "an inverted or empty range is empty");
    }
}

fn prefix_scans_visit_each_prefix(e: &dyn KvEngine) {
    let mut b = WriteBatch::new();
    for k in [&b"a1"[..], b"a2", b"b", b"b1", b"c\xff", b"d"] {
        b.put(k.to_vec(), k.to_vec());
    }
    e.write(b).unwrap();
    // Out of order, one without keys, one that is another's prefix, one repeated.
    let prefixes: Vec<Vec<u8>> = [&b"c"[..], b"a", b"x", b"b", b"b1", b"a"].iter().map(|p| p.to_vec()).collect();
    let mut seen: Vec<(usize, Vec<u8>)> = Vec::new();
    e.scan_prefixes(&prefixes, &mut |i, k, v| {
        assert_eq!(k, v);
        seen.push((i, k.to_vec()));
        true
    })
    .unwrap();
    let want: Vec<(usize, &[u8])> =
        vec![(0, b"c\xff"), (1, b"a1"), (1, b"a2"), (3, b"b"), (3, b"b1"), (4, b"b1"), (5, b"a1"), (5, b"a2")];
    assert_eq!(seen, want.into_iter().map(|(i, k)| (i, k.to_vec())).collect::<Vec<_>>());
    let mut seen = 0;
    e.scan_prefixes(&prefixes, &mut |_, _, _| {
        seen += 1;
        seen < 2
    })
    .unwrap();
    assert_eq!(seen, 2, "returning false ends the whole visit");
    e.scan_prefixes(&[], &mut |_, _, _| panic!("no prefix, no pair")).unwrap();
}

fn delete_range(e: &dyn KvEngine) {
    let mut b = WriteBatch::new();
    for i in 0u8..10 {
        b.put(vec![b'r', i], vec![i]);
    }
    b.put(b"s".to_vec(), b"keep".to_vec());
    e.write(b).unwrap();
    let mut b = WriteBatch::new();
    b.delete_range(b"r".to_vec(), prefix_end(b"r").unwrap());
    e.write(b).unwrap();
    assert!(collect(e, b"r").is_empty());
    assert_eq!(e.get(b"s").unwrap(), Some(b"keep".to_vec()));
    // An inverted range deletes nothing, and the rest of its batch still applies.
    let mut b = WriteBatch::new();
    b.delete_range(b"t".to_vec(), b"a".to_vec());
    b.put(b"u".to_vec(), b"1".to_vec());
    e.write(b).unwrap();
    assert_eq!(e.get(b"s").unwrap(), Some(b"keep".to_vec()));
    assert_eq!(e.get(b"u").unwrap(), Some(b"1".to_vec()));
}

fn multi_get(e: &dyn KvEngine) {
    let mut b = WriteBatch::new();
    b.put(b"m1".to_vec(), b"1".to_vec());
    b.put(b"m3".to_vec(), b"3".to_vec());
    e.write(b).unwrap();
    let got = e.multi_get(&[b"m1".to_vec(), b"m2".to_vec(), b"m3".to_vec()]).unwrap();
    assert_eq!(got, vec![Some(b"1".to_vec()), None, Some(b"3".to_vec())]);
}

fn binary_keys(e: &dyn KvEngine) {
    let k = vec![0u8, 0xff, 0, 0x80];
    let mut b = WriteBatch::new();
    b.put(k.clone(), vec![0; 100_000]);
    e.write(b).unwrap();
    assert_eq!(e.get(&k).unwrap().map(|v| v.len()), Some(100_000));
    assert_eq!(prefix_end(&[0xff, 0xff]), None);
    assert_eq!(prefix_end(&[1, 0xff]), Some(vec![2]));
}

fn buffered_writes_are_visible_before_sync(e: &dyn KvEngine) {
    for i in 0..3u8 {
        let mut b = WriteBatch::new();
        b.put(vec![b'w', i], vec![i]);
        e.write_buffered(b).unwrap();
        assert_eq!(e.get(&[b'w', i]).unwrap(), Some(vec![i]), "a buffered write is visible at once");
    }
    e.sync().unwrap();
    e.sync().unwrap();
    assert_eq!(collect(e, b"w").len(), 3);
}

fn compaction_filter_drops_only_in_range(e: &dyn KvEngine) {
    let mut b = WriteBatch::new();
    for (k, v) in [(&b"c1"[..], &b"drop"[..]), (b"c2", b"keep"), (b"c3", b"drop")] {
        b.put(k.to_vec(), v.to_vec());
    }
    e.write(b).unwrap();
    e.set_compaction_filter(Some(std::sync::Arc::new(|_k: &[u8], v: &[u8]| v == b"drop")));
    e.compact_range(b"c", b"d").unwrap();
    e.set_compaction_filter(None);
    let left: Vec<Vec<u8>> = collect(e, b"c").into_iter().map(|(k, _)| k).collect();
    assert_eq!(left, vec![b"c2".to_vec()], "every pair in the range the filter drops is gone, the others stay");
}

/// Ingested pairs replace older values, are replaced by later writes, and read back in order; two ingestions with
/// overlapping ranges keep the later one's values.
fn ingest_sorted_overwrites_and_shadows(e: &dyn KvEngine) {
    let mut b = WriteBatch::new();
    b.put(b"i/1".to_vec(), b"old".to_vec());
    b.put(b"i/5".to_vec(), b"old".to_vec());
    e.write(b).unwrap();
    let first: Vec<(Vec<u8>, Vec<u8>)> = (0..10u8).map(|i| (format!("i/{i}").into_bytes(), vec![b'a', i])).collect();
    e.ingest_sorted(&mut first.iter().map(|(k, v)| (k.as_slice(), v.as_slice()))).unwrap();
    let second: Vec<(Vec<u8>, Vec<u8>)> =
        (5..15u8).map(|i| (format!("i/{i:02}").into_bytes(), vec![b'b', i])).collect();
    e.ingest_sorted(&mut second.iter().map(|(k, v)| (k.as_slice(), v.as_slice()))).unwrap();
    assert_eq!(e.get(b"i/1").unwrap(), Some(vec![b'a', 1]), "an ingested pair replaces a written one");
    assert_eq!(e.get(b"i/07").unwrap(), Some(vec![b'b', 7]));
    let mut b = WriteBatch::new();
    b.put(b"i/2".to_vec(), b"new".to_vec());
    b.delete(b"i/3".to_vec());
    e.write(b).unwrap();
    assert_eq!(e.get(b"i/2").unwrap(), Some(b"new".to_vec()), "a later write replaces an ingested pair");
    assert_eq!(e.get(b"i/3").unwrap(), None);
    let all = collect(e, b"i/");
    assert_eq!(all.len(), 10 - 1 + 10);
    assert!(all.windows(2).all(|w| w[0].0 < w[1].0));
    e.ingest_sorted(&mut std::iter::empty()).unwrap();
}
