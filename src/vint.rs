//! Cassandra's unsigned variable-length integers (VIntCoding), used for vector element lengths and
//! duration fields.
