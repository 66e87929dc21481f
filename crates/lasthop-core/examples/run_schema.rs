//! Prints the JSON Schema of the run report (`summary.json`):
//! `cargo run -p lasthop-core --example run_schema > schema/run.schema.json`.

fn main() {
    print!("{}", lasthop_core::report::run_schema());
}
