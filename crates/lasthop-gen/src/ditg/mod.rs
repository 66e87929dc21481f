//! D-ITG 2.8.1 compatibility (see `../shared/reference/ditg.md` for the formats and ITGDec's
//! definitions).
