-- values_table
CREATE TEMPORARY TABLE veil_cell_values AS SELECT vals.v0, vals.v1, dense_rank() OVER (ORDER BY vals.v0, vals.v1) - $1 AS vid 
FROM (SELECT DISTINCT src.condition AS v0, src."x""; DROP TABLE t; --" AS v1 
FROM raw."Patients" AS src 
WHERE src."Zip Code" IS NOT NULL AND src.age IS NOT NULL AND src.condition IS NOT NULL) AS vals;

-- values_table_without_columns
CREATE TEMPORARY TABLE veil_cell_values AS SELECT $1 AS vid 
FROM raw."Patients" AS src 
WHERE src."Zip Code" IS NOT NULL AND src.age IS NOT NULL 
 LIMIT $2;

-- cell_values
SELECT veil_cell_values.v0, veil_cell_values.v1, veil_cell_values.vid 
FROM veil_cell_values ORDER BY veil_cell_values.vid;

-- cells_table
CREATE TEMPORARY TABLE veil_cells AS SELECT d0.code_1 AS g0, d1.code_0 AS g1, r.vid, count(*) AS n 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 JOIN veil_cell_values AS r ON src.condition = r.v0 AND coalesce(src."x""; DROP TABLE t; --", (SELECT min(veil_cell_values.v1) AS min_1 
FROM veil_cell_values)) = coalesce(r.v1, (SELECT min(veil_cell_values.v1) AS min_1 
FROM veil_cell_values)) AND (src."x""; DROP TABLE t; --" IS NULL) = (r.v1 IS NULL) 
WHERE src.condition IS NOT NULL GROUP BY d0.code_1, d1.code_0, r.vid;

-- cells_table_null_everywhere
CREATE TEMPORARY TABLE veil_cells AS SELECT d0.code_1 AS g0, d1.code_0 AS g1, r.vid, count(*) AS n 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 JOIN veil_cell_values AS r ON src."x""; DROP TABLE t; --" = r.v1 GROUP BY d0.code_1, d1.code_0, r.vid;

-- cells_table_without_columns
CREATE TEMPORARY TABLE veil_cells AS SELECT d0.code_1 AS g0, d1.code_0 AS g1, r.vid, count(*) AS n 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 JOIN veil_cell_values AS r ON true GROUP BY d0.code_1, d1.code_0, r.vid;

-- coded_cells
SELECT veil_cells.g0, veil_cells.g1, veil_cells.vid, veil_cells.n 
FROM veil_cells;

-- release_rows
SELECT $1 AS veil_version, d0.level_1 AS "Zip Code", CAST(d1.level_0 AS TEXT) AS age, src.condition AS condition, src."x""; DROP TABLE t; --" AS "x""; DROP TABLE t; --" 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 LEFT OUTER JOIN veil_suppressed AS x ON x.g0 = d0.code_1 AND x.g1 = d1.code_0 
WHERE src.condition IS NOT NULL AND x.g0 IS NULL;

-- release_rows_with_held_back
SELECT $1 AS veil_version, d0.level_1 AS "Zip Code", CAST(d1.level_0 AS TEXT) AS age, src.condition AS condition, src."x""; DROP TABLE t; --" AS "x""; DROP TABLE t; --" 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 LEFT OUTER JOIN veil_suppressed AS x ON x.g0 = d0.code_1 AND x.g1 = d1.code_0 LEFT OUTER JOIN veil_withheld AS w ON w.g0 = d0.code_1 AND w.g1 = d1.code_0 AND src.condition IS NOT DISTINCT FROM w.v0 AND src."x""; DROP TABLE t; --" IS NOT DISTINCT FROM w.v1 
WHERE x.g0 IS NULL AND w.id IS NULL UNION ALL SELECT $1 AS veil_version, numbered."Zip Code", numbered.age, numbered.condition, numbered."x""; DROP TABLE t; --" 
FROM (SELECT d0.level_1 AS "Zip Code", CAST(d1.level_0 AS TEXT) AS age, src.condition AS condition, src."x""; DROP TABLE t; --" AS "x""; DROP TABLE t; --", w.held AS veil_held, row_number() OVER (PARTITION BY w.id ORDER BY w.id) AS veil_rn 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 LEFT OUTER JOIN veil_suppressed AS x ON x.g0 = d0.code_1 AND x.g1 = d1.code_0 JOIN veil_withheld AS w ON w.g0 = d0.code_1 AND w.g1 = d1.code_0 AND src.condition IS NOT DISTINCT FROM w.v0 AND src."x""; DROP TABLE t; --" IS NOT DISTINCT FROM w.v1 
WHERE x.g0 IS NULL) AS numbered 
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
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0;

-- insert_blocks
INSERT INTO published.census_block_rows (veil_version, "Zip Code", age, condition, n) SELECT $1 AS anon_1, published.census_rows."Zip Code", published.census_rows.age, published.census_rows.condition, count(*) AS count_1 
FROM published.census_rows 
WHERE published.census_rows.veil_version = $2 GROUP BY published.census_rows."Zip Code", published.census_rows.age, published.census_rows.condition;

-- recount
SELECT published.census_block_rows."Zip Code", published.census_block_rows.age, published.census_block_rows.condition, CAST(sum(published.census_block_rows.n) AS BIGINT) AS n 
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
INSERT INTO published."census_dim_Zip Code_rows" (veil_dim, level_0, level_1, level_2, level_3, level_4, level_5) SELECT $1 AS anon_1, CAST(veil_dim_0.level_0 AS TEXT) AS level_0, veil_dim_0.level_1, veil_dim_0.level_2, veil_dim_0.level_3, veil_dim_0.level_4, veil_dim_0.level_5 
FROM veil_dim_0;

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
INSERT INTO veil.publication_dimensions (name, version, attribute, role, digest, height, dim_table) VALUES ($1, $2, $3, $4, $5, $6, $7);

-- dim_expire
DELETE FROM published."census_dim_Zip Code_rows" WHERE (published."census_dim_Zip Code_rows".veil_dim NOT IN (SELECT veil.publication_dimensions.digest 
FROM veil.publication_dimensions JOIN veil.releases ON veil.releases.name = veil.publication_dimensions.name AND veil.releases.version = veil.publication_dimensions.version 
WHERE veil.publication_dimensions.name = $1 AND veil.publication_dimensions.attribute = $2 AND veil.releases.status = $3));
