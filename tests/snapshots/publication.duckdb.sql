-- values_table
CREATE TEMPORARY TABLE veil_cell_values AS SELECT vals.v0, vals.v1, vals.n, dense_rank() OVER (ORDER BY vals.v0, vals.v1) - $1 AS vid 
FROM (SELECT src.condition AS v0, src."x""; DROP TABLE t; --" AS v1, count(*) AS n 
FROM raw."Patients" AS src 
WHERE src."Zip Code" IS NOT NULL AND src.age IS NOT NULL AND src.condition IS NOT NULL GROUP BY src.condition, src."x""; DROP TABLE t; --") AS vals;

-- values_table_without_columns
CREATE TEMPORARY TABLE veil_cell_values AS SELECT count(*) AS n, $1 AS vid 
FROM raw."Patients" AS src 
WHERE src."Zip Code" IS NOT NULL AND src.age IS NOT NULL 
HAVING count(*) > $2;

-- cell_values
SELECT veil_cell_values.v0, veil_cell_values.v1, veil_cell_values.n, veil_cell_values.vid 
FROM veil_cell_values ORDER BY veil_cell_values.vid;

-- cells_table
CREATE TEMPORARY TABLE veil_cells AS SELECT d0.code_1 AS g0, d1.code_0 AS g1, r.vid AS vid, count(*) AS n 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 JOIN veil_cell_values AS r ON src.condition = r.v0 AND coalesce(src."x""; DROP TABLE t; --", (SELECT min(veil_cell_values.v1) AS min_1 
FROM veil_cell_values)) = coalesce(r.v1, (SELECT min(veil_cell_values.v1) AS min_1 
FROM veil_cell_values)) AND (src."x""; DROP TABLE t; --" IS NULL) = (r.v1 IS NULL) 
WHERE src.condition IS NOT NULL GROUP BY d0.code_1, d1.code_0, r.vid;

-- cells_table_null_everywhere
CREATE TEMPORARY TABLE veil_cells AS SELECT d0.code_1 AS g0, d1.code_0 AS g1, r.vid AS vid, count(*) AS n 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 JOIN veil_cell_values AS r ON src."x""; DROP TABLE t; --" = r.v1 GROUP BY d0.code_1, d1.code_0, r.vid;

-- cells_table_without_columns
CREATE TEMPORARY TABLE veil_cells AS SELECT d0.code_1 AS g0, d1.code_0 AS g1, r.vid AS vid, count(*) AS n 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 JOIN veil_cell_values AS r ON true GROUP BY d0.code_1, d1.code_0, r.vid;

-- cells_table_narrow
CREATE TEMPORARY TABLE veil_cells AS SELECT CAST(d0.code_1 AS TINYINT) AS g0, CAST(d1.code_0 AS SMALLINT) AS g1, CAST(r.vid AS INTEGER) AS vid, count(*) AS n 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 JOIN veil_cell_values AS r ON src.condition = r.v0 GROUP BY CAST(d0.code_1 AS TINYINT), CAST(d1.code_0 AS SMALLINT), CAST(r.vid AS INTEGER);

-- coded_cells
SELECT veil_cells.g0, veil_cells.g1, veil_cells.vid, veil_cells.n 
FROM veil_cells;

-- valued_cells
SELECT d0.code_1 AS g0, d1.code_0 AS g1, src.condition AS v0, src."x""; DROP TABLE t; --" AS v1, count(*) AS n 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 
WHERE src.condition IS NOT NULL GROUP BY d0.code_1, d1.code_0, src.condition, src."x""; DROP TABLE t; --";

-- valued_cells_without_columns
SELECT d0.code_1 AS g0, d1.code_0 AS g1, count(*) AS n 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 GROUP BY d0.code_1, d1.code_0;

-- release_rows
SELECT $1 AS veil_version, d0.level_1 AS "Zip Code", CAST(d1.level_0 AS TEXT) AS age, src.condition AS condition, src."x""; DROP TABLE t; --" AS "x""; DROP TABLE t; --" 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 LEFT OUTER JOIN veil_suppressed AS x ON x.g0 = d0.code_1 AND x.g1 = d1.code_0 LEFT OUTER JOIN veil_withheld AS w ON w.g0 = d0.code_1 AND w.g1 = d1.code_0 
WHERE src.condition IS NOT NULL AND x.g0 IS NULL AND w.id IS NULL UNION ALL SELECT $1 AS veil_version, numbered."Zip Code", numbered.age, numbered.condition, numbered."x""; DROP TABLE t; --" 
FROM (SELECT d0.level_1 AS "Zip Code", CAST(d1.level_0 AS TEXT) AS age, src.condition AS condition, src."x""; DROP TABLE t; --" AS "x""; DROP TABLE t; --", w.held AS veil_held, row_number() OVER (PARTITION BY w.id ORDER BY w.id) AS veil_rn 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 LEFT OUTER JOIN veil_suppressed AS x ON x.g0 = d0.code_1 AND x.g1 = d1.code_0 JOIN veil_withheld AS w ON w.g0 = d0.code_1 AND w.g1 = d1.code_0 
WHERE src.condition IS NOT NULL AND x.g0 IS NULL) AS numbered 
WHERE numbered.veil_rn > numbered.veil_held;

-- release_rows_with_held_back
SELECT $1 AS veil_version, d0.level_1 AS "Zip Code", CAST(d1.level_0 AS TEXT) AS age, src.condition AS condition, src."x""; DROP TABLE t; --" AS "x""; DROP TABLE t; --" 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 LEFT OUTER JOIN veil_suppressed AS x ON x.g0 = d0.code_1 AND x.g1 = d1.code_0 LEFT OUTER JOIN veil_withheld AS w ON w.g0 = d0.code_1 AND w.g1 = d1.code_0 AND src.condition IS NOT DISTINCT FROM w.v0 AND src."x""; DROP TABLE t; --" IS NOT DISTINCT FROM w.v1 
WHERE x.g0 IS NULL AND w.id IS NULL UNION ALL SELECT $1 AS veil_version, numbered."Zip Code", numbered.age, numbered.condition, numbered."x""; DROP TABLE t; --" 
FROM (SELECT d0.level_1 AS "Zip Code", CAST(d1.level_0 AS TEXT) AS age, src.condition AS condition, src."x""; DROP TABLE t; --" AS "x""; DROP TABLE t; --", w.held AS veil_held, row_number() OVER (PARTITION BY w.id ORDER BY w.id) AS veil_rn 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 LEFT OUTER JOIN veil_suppressed AS x ON x.g0 = d0.code_1 AND x.g1 = d1.code_0 JOIN veil_withheld AS w ON w.g0 = d0.code_1 AND w.g1 = d1.code_0 AND src.condition IS NOT DISTINCT FROM w.v0 AND src."x""; DROP TABLE t; --" IS NOT DISTINCT FROM w.v1 
WHERE x.g0 IS NULL) AS numbered 
WHERE numbered.veil_rn > numbered.veil_held;

-- release_rows_held_back_qis_only
SELECT $1 AS veil_version, d0.level_1 AS "Zip Code", CAST(d1.level_0 AS TEXT) AS age 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 LEFT OUTER JOIN veil_withheld AS w ON w.g0 = d0.code_1 AND w.g1 = d1.code_0 
WHERE w.id IS NULL UNION ALL SELECT $1 AS veil_version, numbered."Zip Code", numbered.age 
FROM (SELECT d0.level_1 AS "Zip Code", CAST(d1.level_0 AS TEXT) AS age, w.held AS veil_held, row_number() OVER (PARTITION BY w.id ORDER BY w.id) AS veil_rn 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 JOIN veil_withheld AS w ON w.g0 = d0.code_1 AND w.g1 = d1.code_0) AS numbered 
WHERE numbered.veil_rn > numbered.veil_held;

-- rows_ddl
CREATE TABLE published.census_rows (
	veil_version INTEGER NOT NULL, 
	"Zip Code" TEXT, 
	age TEXT, 
	condition TEXT, 
	"x""; DROP TABLE t; --" TEXT
);

-- insert_rows
INSERT INTO published.census_rows (veil_version, "Zip Code", age, condition, "x""; DROP TABLE t; --") SELECT $1 AS veil_version, d0.level_1 AS "Zip Code", CAST(d1.level_0 AS TEXT) AS age, src.condition AS condition, src."x""; DROP TABLE t; --" AS "x""; DROP TABLE t; --" 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 LEFT OUTER JOIN veil_withheld AS w ON w.g0 = d0.code_1 AND w.g1 = d1.code_0 
WHERE w.id IS NULL UNION ALL SELECT $1 AS veil_version, numbered."Zip Code", numbered.age, numbered.condition, numbered."x""; DROP TABLE t; --" 
FROM (SELECT d0.level_1 AS "Zip Code", CAST(d1.level_0 AS TEXT) AS age, src.condition AS condition, src."x""; DROP TABLE t; --" AS "x""; DROP TABLE t; --", w.held AS veil_held, row_number() OVER (PARTITION BY w.id ORDER BY w.id) AS veil_rn 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 JOIN veil_withheld AS w ON w.g0 = d0.code_1 AND w.g1 = d1.code_0) AS numbered 
WHERE numbered.veil_rn > numbered.veil_held;

-- insert_blocks
INSERT INTO published.census_block_rows (veil_version, "Zip Code", age, condition, n) SELECT $1 AS anon_1, published.census_rows."Zip Code", published.census_rows.age, published.census_rows.condition, count(*) AS count_1 
FROM published.census_rows 
WHERE published.census_rows.veil_version = $2 GROUP BY published.census_rows."Zip Code", published.census_rows.age, published.census_rows.condition;

-- insert_blocks_numbered
INSERT INTO published.census_block_rows (veil_version, "Zip Code", age, condition, n) SELECT $1 AS anon_1, l0.v, l1.v AS v_1, l2.v AS v_2, g.n 
FROM (SELECT k0.code AS c0, k1.code AS c1, k2.code AS c2, count(*) AS n 
FROM published.census_rows LEFT OUTER JOIN veil_block_keys_0 AS k0 ON published.census_rows."Zip Code" = k0.v LEFT OUTER JOIN veil_block_keys_1 AS k1 ON published.census_rows.age = k1.v LEFT OUTER JOIN veil_block_keys_2 AS k2 ON published.census_rows.condition = k2.v 
WHERE published.census_rows.veil_version = $2 GROUP BY k0.code, k1.code, k2.code) AS g LEFT OUTER JOIN veil_block_keys_0 AS l0 ON g.c0 = l0.code LEFT OUTER JOIN veil_block_keys_1 AS l1 ON g.c1 = l1.code LEFT OUTER JOIN veil_block_keys_2 AS l2 ON g.c2 = l2.code;

-- analyze
ANALYZE veil_cells;

-- block_keys
CREATE TEMPORARY TABLE veil_block_keys_3 AS SELECT d.v, dense_rank() OVER (ORDER BY d.v) AS code 
FROM (SELECT DISTINCT published.census_rows."x""; DROP TABLE t; --" AS v 
FROM published.census_rows 
WHERE published.census_rows.veil_version = $1 AND published.census_rows."x""; DROP TABLE t; --" IS NOT NULL) AS d;

-- recount
SELECT CAST(coalesce(k0.code, $1) AS BIGINT) AS c0, CAST(coalesce(k1.code, $2) AS BIGINT) AS c1, CAST(coalesce(k2.code, $3) AS BIGINT) AS c2, CAST(sum(published.census_block_rows.n) AS BIGINT) AS n 
FROM published.census_block_rows LEFT OUTER JOIN (SELECT d0.v AS v, dense_rank() OVER (ORDER BY d0.v) AS code 
FROM (SELECT DISTINCT published.census_block_rows."Zip Code" AS v 
FROM published.census_block_rows 
WHERE published.census_block_rows.veil_version = $4 AND published.census_block_rows."Zip Code" IS NOT NULL) AS d0) AS k0 ON published.census_block_rows."Zip Code" = k0.v LEFT OUTER JOIN (SELECT d1.v AS v, dense_rank() OVER (ORDER BY d1.v) AS code 
FROM (SELECT DISTINCT published.census_block_rows.age AS v 
FROM published.census_block_rows 
WHERE published.census_block_rows.veil_version = $5 AND published.census_block_rows.age IS NOT NULL) AS d1) AS k1 ON published.census_block_rows.age = k1.v LEFT OUTER JOIN (SELECT d2.v AS v, dense_rank() OVER (ORDER BY d2.v) AS code 
FROM (SELECT DISTINCT published.census_block_rows.condition AS v 
FROM published.census_block_rows 
WHERE published.census_block_rows.veil_version = $6 AND published.census_block_rows.condition IS NOT NULL) AS d2) AS k2 ON published.census_block_rows.condition = k2.v 
WHERE published.census_block_rows.veil_version = $7 GROUP BY k0.code, k1.code, k2.code;

-- recount_numbers
SELECT k0.v, k0.code 
FROM (SELECT d0.v AS v, dense_rank() OVER (ORDER BY d0.v) AS code 
FROM (SELECT DISTINCT published.census_block_rows."Zip Code" AS v 
FROM published.census_block_rows 
WHERE published.census_block_rows.veil_version = $1 AND published.census_block_rows."Zip Code" IS NOT NULL) AS d0) AS k0;

-- recount_values
SELECT published.census_block_rows."Zip Code" AS c0, published.census_block_rows.age AS c1, published.census_block_rows.condition AS c2, CAST(sum(published.census_block_rows.n) AS BIGINT) AS n 
FROM published.census_block_rows 
WHERE published.census_block_rows.veil_version = $1 GROUP BY published.census_block_rows."Zip Code", published.census_block_rows.age, published.census_block_rows.condition;

-- view_current
CREATE OR REPLACE VIEW published.census AS SELECT published.census_rows."Zip Code", published.census_rows.age, published.census_rows.condition, published.census_rows."x""; DROP TABLE t; --" 
FROM published.census_rows 
WHERE published.census_rows.veil_version = (SELECT veil.publications.current_version 
FROM veil.publications 
WHERE veil.publications.name = 'census');

-- view_blocks
CREATE OR REPLACE VIEW published.census_blocks AS SELECT published.census_block_rows."Zip Code", published.census_block_rows.age, CAST(sum(published.census_block_rows.n) OVER (PARTITION BY published.census_block_rows."Zip Code", published.census_block_rows.age) AS BIGINT) AS block_size, published.census_block_rows.condition, published.census_block_rows.n AS count 
FROM published.census_block_rows 
WHERE published.census_block_rows.veil_version = (SELECT veil.publications.current_version 
FROM veil.publications 
WHERE veil.publications.name = 'census');

-- view_releases
CREATE OR REPLACE VIEW published.census_releases AS SELECT veil.releases.version, veil.releases.id AS release_id, veil.releases.published_at, veil.releases.node, veil.releases.rows_published, veil.releases.rows_suppressed, veil.releases.achieved, veil.releases.output_table, veil.releases.status, veil.releases.rows_deferred, veil.releases.version = (SELECT veil.publications.current_version 
FROM veil.publications 
WHERE veil.publications.name = 'census') AS current 
FROM veil.releases 
WHERE veil.releases.name = 'census' AND veil.releases.status IN ('published', 'expired');

-- view_version
CREATE OR REPLACE VIEW published.census_v7 AS SELECT published.census_rows."Zip Code", published.census_rows.age, published.census_rows.condition, published.census_rows."x""; DROP TABLE t; --" 
FROM published.census_rows 
WHERE published.census_rows.veil_version = 7;

-- move_pointer
UPDATE veil.publications SET current_version=$1, updated_at=now() WHERE veil.publications.name = $2;

-- expire
DELETE FROM published.census_rows WHERE published.census_rows.veil_version IN (__[POSTCOMPILE_veil_version_1]);

-- close_ledger_cells
UPDATE veil.series_cells SET last_version=$1 WHERE veil.series_cells.name = $2 AND veil.series_cells.last_version = $3 AND veil.series_cells.block_id IN (SELECT veil_changed_blocks.id 
FROM veil_changed_blocks);

-- ledger_block_ids_ddl
CREATE TEMPORARY TABLE veil_cell_blocks (
	g0 BIGINT, 
	g1 BIGINT, 
	block_id BIGINT
);

-- ledger_value_ids_ddl
CREATE TEMPORARY TABLE veil_cell_value_ids (
	vid BIGINT, 
	value_id BIGINT
);

-- copy_ledger_cells
INSERT INTO veil.series_cells (name, block_id, value_id, count, first_version, last_version) SELECT $1 AS name, b.block_id, v.value_id, c.n, $2 AS first_version, $3 AS last_version 
FROM veil_cells AS c JOIN veil_cell_blocks AS b ON b.g0 = c.g0 AND b.g1 = c.g1 JOIN veil_cell_value_ids AS v ON v.vid = c.vid;

-- copy_ledger_cells_merged
INSERT INTO veil.series_cells (name, block_id, value_id, count, first_version, last_version) SELECT $1 AS name, b.block_id, v.value_id, CAST(sum(c.n) AS BIGINT) AS sum_1, $2 AS first_version, $3 AS last_version 
FROM veil_cells AS c JOIN veil_cell_blocks AS b ON b.g0 = c.g0 AND b.g1 = c.g1 JOIN veil_cell_value_ids AS v ON v.vid = c.vid GROUP BY b.block_id, v.value_id;

-- ledger_block_labels
CREATE TEMPORARY TABLE veil_cell_block_labels AS SELECT b.block_id, m0.label AS a0, m1.label AS a1 
FROM veil_cell_blocks AS b JOIN (SELECT DISTINCT veil_dim_0.code_1 AS code, veil_dim_0.level_1 AS label 
FROM veil_dim_0) AS m0 ON b.g0 = m0.code JOIN (SELECT DISTINCT veil_dim_1.code_0 AS code, CAST(veil_dim_1.level_0 AS TEXT) AS label 
FROM veil_dim_1) AS m1 ON b.g1 = m1.code;

-- ledger_value_labels
CREATE TEMPORARY TABLE veil_cell_value_labels AS SELECT r.v0, r.v1, r.vid, i.value_id 
FROM veil_cell_values AS r JOIN veil_cell_value_ids AS i ON i.vid = r.vid;

-- copy_published_blocks
INSERT INTO veil.series_cells (name, block_id, value_id, count, first_version, last_version) SELECT $1 AS name, bl.block_id, v.value_id, c.n, $2 AS first_version, $3 AS last_version 
FROM published.census_block_rows AS c JOIN veil_cell_block_labels AS bl ON c."Zip Code" = bl.a0 AND c.age = bl.a1 JOIN veil_cell_value_labels AS v ON c.condition = v.v0 
WHERE c.veil_version = $4;

-- copy_published_blocks_merged
INSERT INTO veil.series_cells (name, block_id, value_id, count, first_version, last_version) SELECT $1 AS name, bl.block_id, v.value_id, CAST(sum(c.n) AS BIGINT) AS sum_1, $2 AS first_version, $3 AS last_version 
FROM published.census_block_rows AS c JOIN veil_cell_block_labels AS bl ON c."Zip Code" = bl.a0 AND c.age = bl.a1 JOIN veil_cell_value_labels AS v ON coalesce(c.condition, (SELECT min(veil_cell_values.v0) AS min_1 
FROM veil_cell_values)) = coalesce(v.v0, (SELECT min(veil_cell_values.v0) AS min_1 
FROM veil_cell_values)) AND (c.condition IS NULL) = (v.v0 IS NULL) 
WHERE c.veil_version = $4 GROUP BY bl.block_id, v.value_id;

-- ledger_rows_per_value
SELECT veil_cells.vid, CAST(sum(veil_cells.n) AS BIGINT) AS n 
FROM veil_cells GROUP BY veil_cells.vid;

-- ledger_version_rows
SELECT coalesce(sum(veil.series_cells.count), $1) AS coalesce_1, count(*) AS count_1 
FROM veil.series_cells 
WHERE veil.series_cells.name = $2 AND veil.series_cells.first_version = $3;

-- ledger_cell_shards_ddl
CREATE TEMPORARY TABLE veil_cell_shards (
	g0 BIGINT, 
	g1 BIGINT, 
	shard INTEGER
);

-- ledger_block_shards_ddl
CREATE TEMPORARY TABLE veil_ledger_shards (
	block_id BIGINT, 
	shard INTEGER
);

-- ledger_new_cells_ddl
CREATE TEMPORARY TABLE veil_new_cells (
	block_id BIGINT, 
	value_id BIGINT, 
	count BIGINT
);

-- ledger_sharded_candidate
CREATE TEMPORARY TABLE veil_sharded_cells AS SELECT CAST(c.g0 AS BIGINT) AS g0, CAST(c.g1 AS BIGINT) AS g1, CAST(c.vid AS BIGINT) AS vid, c.n, s.shard 
FROM veil_cells AS c JOIN veil_cell_shards AS s ON s.g0 = c.g0 AND s.g1 = c.g1 ORDER BY s.shard;

-- ledger_sharded_ledger
CREATE TEMPORARY TABLE veil_sharded_ledger AS SELECT veil.series_cells.block_id, veil.series_cells.value_id, veil.series_cells.count, s.shard 
FROM veil.series_cells JOIN veil_ledger_shards AS s ON s.block_id = veil.series_cells.block_id 
WHERE veil.series_cells.name = $1 ORDER BY s.shard;

-- ledger_shard_of_candidate
SELECT veil_sharded_cells.g0, veil_sharded_cells.g1, veil_sharded_cells.vid, veil_sharded_cells.n 
FROM veil_sharded_cells 
WHERE veil_sharded_cells.shard = $1;

-- ledger_shard_of_ledger
SELECT veil_sharded_ledger.block_id, veil_sharded_ledger.value_id, veil_sharded_ledger.count 
FROM veil_sharded_ledger 
WHERE veil_sharded_ledger.shard = $1;

-- ledger_write_new_cells
INSERT INTO veil.series_cells (name, block_id, value_id, count, first_version, last_version) SELECT $1 AS name, veil_new_cells.block_id, veil_new_cells.value_id, veil_new_cells.count, $2 AS first_version, $3 AS last_version 
FROM veil_new_cells;

-- dim_rows_ddl
CREATE TABLE published."census_dim_Zip Code_rows" (
	veil_dim TEXT NOT NULL, 
	level_0 TEXT, 
	level_1 TEXT, 
	level_2 TEXT, 
	level_3 TEXT, 
	level_4 TEXT, 
	level_5 TEXT
);

-- dim_copy
INSERT INTO published."census_dim_Zip Code_rows" (veil_dim, level_0, level_1, level_2, level_3, level_4, level_5) SELECT DISTINCT $1 AS anon_1, CAST(NULL AS TEXT) AS anon_2, CAST(NULL AS TEXT) AS anon__1, veil_dim_0.level_2, veil_dim_0.level_3, veil_dim_0.level_4, veil_dim_0.level_5 
FROM veil_dim_0 
WHERE veil_dim_0.level_2 IN (SELECT DISTINCT published.census_block_rows."Zip Code" 
FROM published.census_block_rows 
WHERE published.census_block_rows.veil_version IN (__[POSTCOMPILE_veil_version_1]) AND published.census_block_rows."Zip Code" IS NOT NULL);

-- dim_copy_leaves
INSERT INTO published."census_dim_Zip Code_rows" (veil_dim, level_0, level_1, level_2, level_3, level_4, level_5) SELECT DISTINCT $1 AS anon_1, CAST(veil_dim_0.level_0 AS TEXT) AS level_0, veil_dim_0.level_1, veil_dim_0.level_2, veil_dim_0.level_3, veil_dim_0.level_4, veil_dim_0.level_5 
FROM veil_dim_0 
WHERE CAST(veil_dim_0.level_0 AS TEXT) IN (SELECT DISTINCT published.census_block_rows."Zip Code" 
FROM published.census_block_rows 
WHERE published.census_block_rows.veil_version IN (__[POSTCOMPILE_veil_version_1]) AND published.census_block_rows."Zip Code" IS NOT NULL);

-- dim_legacy
SELECT veil.publication_dimensions.attribute, veil.publication_dimensions.digest, veil.publication_dimensions.role, veil.publication_dimensions.version, veil.releases.node, veil.publication_dimensions.dim_table, veil.releases.config 
FROM veil.publication_dimensions JOIN veil.releases ON veil.releases.name = veil.publication_dimensions.name AND veil.releases.version = veil.publication_dimensions.version 
WHERE veil.publication_dimensions.name = $1 AND veil.publication_dimensions.level IS NULL AND veil.releases.status = $2 ORDER BY veil.publication_dimensions.attribute, veil.publication_dimensions.digest, veil.publication_dimensions.version;

-- dim_redact
INSERT INTO published."census_dim_Zip Code_rows" (veil_dim, level_0, level_1, level_2, level_3, level_4, level_5) SELECT DISTINCT $1 AS anon_1, CAST(NULL AS TEXT) AS anon_2, CAST(NULL AS TEXT) AS anon__1, published."census_dim_Zip Code_rows".level_2, published."census_dim_Zip Code_rows".level_3, published."census_dim_Zip Code_rows".level_4, published."census_dim_Zip Code_rows".level_5 
FROM published."census_dim_Zip Code_rows" 
WHERE published."census_dim_Zip Code_rows".veil_dim = $2 AND (published."census_dim_Zip Code_rows".level_1 IN (__[POSTCOMPILE_level_1_1]) OR published."census_dim_Zip Code_rows".level_2 IN (__[POSTCOMPILE_level_2_1]));

-- dim_labels_at
SELECT DISTINCT published."census_dim_Zip Code_rows".level_1 
FROM published."census_dim_Zip Code_rows" 
WHERE published."census_dim_Zip Code_rows".veil_dim = $1 AND published."census_dim_Zip Code_rows".level_1 IN (__[POSTCOMPILE_level_1_1]);

-- dim_retag
UPDATE published."census_dim_Zip Code_rows" SET veil_dim=$1 WHERE published."census_dim_Zip Code_rows".veil_dim = $2;

-- dim_mark_level
UPDATE veil.publication_dimensions SET level=$1 WHERE veil.publication_dimensions.name = $2 AND veil.publication_dimensions.attribute = $3 AND veil.publication_dimensions.version IN (__[POSTCOMPILE_version_1]);

-- dim_lookup
SELECT count(*) AS count_1 
FROM published."census_dim_Zip Code_rows" 
WHERE published."census_dim_Zip Code_rows".veil_dim = $1;

-- view_dim_current
CREATE OR REPLACE VIEW published."census_dim_Zip Code" AS SELECT published."census_dim_Zip Code_rows".level_0, published."census_dim_Zip Code_rows".level_1, published."census_dim_Zip Code_rows".level_2, published."census_dim_Zip Code_rows".level_3, published."census_dim_Zip Code_rows".level_4, published."census_dim_Zip Code_rows".level_5 
FROM published."census_dim_Zip Code_rows" 
WHERE published."census_dim_Zip Code_rows".veil_dim = (SELECT veil.publication_dimensions.digest 
FROM veil.publication_dimensions 
WHERE veil.publication_dimensions.name = 'census' AND veil.publication_dimensions.attribute = 'Zip Code' AND veil.publication_dimensions.version = (SELECT veil.publications.current_version 
FROM veil.publications 
WHERE veil.publications.name = 'census'));

-- view_dim_version
CREATE OR REPLACE VIEW published."census_v7_dim_Zip Code" AS SELECT published."census_dim_Zip Code_rows".level_0, published."census_dim_Zip Code_rows".level_1, published."census_dim_Zip Code_rows".level_2, published."census_dim_Zip Code_rows".level_3, published."census_dim_Zip Code_rows".level_4, published."census_dim_Zip Code_rows".level_5 
FROM published."census_dim_Zip Code_rows" 
WHERE published."census_dim_Zip Code_rows".veil_dim = '3f2a';

-- record_dims
INSERT INTO veil.publication_dimensions (name, version, attribute, role, digest, height, dim_table, level) VALUES ($1, $2, $3, $4, $5, $6, $7, $8);

-- dim_expire
DELETE FROM published."census_dim_Zip Code_rows" WHERE (published."census_dim_Zip Code_rows".veil_dim NOT IN (SELECT veil.publication_dimensions.digest 
FROM veil.publication_dimensions JOIN veil.releases ON veil.releases.name = veil.publication_dimensions.name AND veil.releases.version = veil.publication_dimensions.version 
WHERE veil.publication_dimensions.name = $1 AND veil.publication_dimensions.attribute = $2 AND veil.releases.status = $3));

-- rows_version_index
CREATE INDEX census_rows_version ON published.census_rows (veil_version);

-- view_version_blocks
CREATE OR REPLACE VIEW published.census_v7_blocks AS SELECT published.census_block_rows."Zip Code", published.census_block_rows.age, CAST(sum(published.census_block_rows.n) OVER (PARTITION BY published.census_block_rows."Zip Code", published.census_block_rows.age) AS BIGINT) AS block_size, published.census_block_rows.condition, published.census_block_rows.n AS count 
FROM published.census_block_rows 
WHERE published.census_block_rows.veil_version = 7;

-- blocks_of_version
SELECT count(*) AS count_1 
FROM published.census_block_rows 
WHERE veil_version = $1;

-- legacy_copy_rows
CREATE TABLE published.census_rows AS SELECT $1 AS veil_version, * 
FROM published.census_v7;

-- drop_expired_view
DROP VIEW IF EXISTS published.census_v1_blocks;

-- drop_expired_table
DROP TABLE IF EXISTS published.census_v1;

-- dim_rows_index
CREATE INDEX "census_dim_Zip Code_rows_digest" ON published."census_dim_Zip Code_rows" (veil_dim);

-- dim_expire_by_name
DELETE FROM published."census_dim_Zip Code_rows" WHERE (published."census_dim_Zip Code_rows".veil_dim NOT IN (SELECT veil.publication_dimensions.digest 
FROM veil.publication_dimensions JOIN veil.releases ON veil.releases.name = veil.publication_dimensions.name AND veil.releases.version = veil.publication_dimensions.version 
WHERE veil.publication_dimensions.name = $1 AND veil.publication_dimensions.attribute = $2 AND veil.releases.status = $3));
