//! The published JSON Schema (`schema/scenario.schema.json`, what editors and `lasthop schema`
//! users read) is exactly what the types generate. `LASTHOP_UPDATE_SCHEMA=1 cargo test -p
//! lasthop-scenario --test schema` rewrites it after a schema change.

#[test]
fn the_published_schema_is_the_generated_one() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema/scenario.schema.json");
    let generated = lasthop_scenario::json_schema() + "\n";
    if std::env::var_os("LASTHOP_UPDATE_SCHEMA").is_some() {
        std::fs::write(path, &generated).expect("schema written");
    }
    let published = std::fs::read_to_string(path).expect("schema/scenario.schema.json");
    assert!(published == generated, "schema/scenario.schema.json is stale: run LASTHOP_UPDATE_SCHEMA=1 cargo test -p lasthop-scenario --test schema");
}
