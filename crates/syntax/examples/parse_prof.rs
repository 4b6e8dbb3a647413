//! Parses one statement N times and prints the mean: a driver for `perf record` on the parser alone
//! (`cargo build --release --example parse_prof -p quiver-syntax`; usage: parse_prof N STMT).
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let n: usize = a[1].parse().expect("N");
    let t = std::time::Instant::now();
    for _ in 0..n {
        std::hint::black_box(quiver_syntax::parser::parse(std::hint::black_box(&a[2])).expect("parses"));
    }
    println!("{n} parses, mean {:.2} us", t.elapsed().as_secs_f64() * 1e6 / n as f64);
}
