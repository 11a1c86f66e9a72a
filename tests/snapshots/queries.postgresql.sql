-- columns_of
SELECT information_schema.columns.column_name, information_schema.columns.data_type, information_schema.columns.numeric_precision, information_schema.columns.numeric_scale 
FROM information_schema.columns 
WHERE information_schema.columns.table_schema = %(param_1)s::VARCHAR AND information_schema.columns.table_name = %(param_2)s::VARCHAR ORDER BY information_schema.columns.ordinal_position;

-- columns_of_default_schema
SELECT information_schema.columns.column_name, information_schema.columns.data_type, information_schema.columns.numeric_precision, information_schema.columns.numeric_scale 
FROM information_schema.columns 
WHERE information_schema.columns.table_schema = current_schema() AND information_schema.columns.table_name = %(param_1)s::VARCHAR ORDER BY information_schema.columns.ordinal_position;

-- base_raw
CREATE TEMPORARY TABLE veil_base_raw AS SELECT raw."Patients"."Zip Code" AS q0, raw."Patients".age AS q1, raw."Patients"."x""; DROP TABLE t; --" AS q2, raw."Patients".condition AS s0, raw."Patients".income AS s1, count(*) AS n 
FROM raw."Patients" GROUP BY raw."Patients"."Zip Code", raw."Patients".age, raw."Patients"."x""; DROP TABLE t; --", raw."Patients".condition, raw."Patients".income;

-- base_raw_sizes_only
CREATE TEMPORARY TABLE veil_base_raw AS SELECT raw."Patients"."Zip Code" AS q0, raw."Patients".age AS q1, raw."Patients"."x""; DROP TABLE t; --" AS q2, count(*) AS n 
FROM raw."Patients" GROUP BY raw."Patients"."Zip Code", raw."Patients".age, raw."Patients"."x""; DROP TABLE t; --";

-- raw_values
SELECT veil_base_raw.q0 AS value, sum(veil_base_raw.n) AS n 
FROM veil_base_raw GROUP BY veil_base_raw.q0;

-- base_coded
CREATE TEMPORARY TABLE veil_base AS SELECT d0.code_0 AS q0, d1.code_0 AS q1, d2.code_0 AS q2, v0.code AS s0, v1.code AS s1, r.n 
FROM veil_base_raw AS r JOIN veil_dim_0 AS d0 ON r.q0 = d0.level_0 JOIN veil_dim_1 AS d1 ON r.q1 = d1.level_0 JOIN veil_dim_2 AS d2 ON r.q2 = d2.level_0 JOIN veil_sdom_0 AS v0 ON r.s0 = v0.value JOIN veil_sdom_1 AS v1 ON r.s1 = v1.value;

-- dimension_ddl
CREATE TEMPORARY TABLE veil_dim_0 (
	level_0 TEXT, 
	level_1 TEXT, 
	level_2 TEXT, 
	level_3 TEXT, 
	level_4 TEXT, 
	level_5 TEXT, 
	code_0 INTEGER, 
	code_1 INTEGER, 
	code_2 INTEGER, 
	code_3 INTEGER, 
	code_4 INTEGER, 
	code_5 INTEGER
);

-- node_bottom
SELECT b.q0 AS g0, b.q1 AS g1, b.q2 AS g2, b.s0, b.s1, sum(b.n) AS n 
FROM veil_base AS b GROUP BY b.q0, b.q1, b.q2, b.s0, b.s1;

-- node_figure_2
SELECT d0.code_2 AS g0, d1.code_1 AS g1, d2.code_1 AS g2, b.s0, b.s1, sum(b.n) AS n 
FROM veil_base AS b JOIN veil_dim_0 AS d0 ON b.q0 = d0.code_0 JOIN veil_dim_1 AS d1 ON b.q1 = d1.code_0 JOIN veil_dim_2 AS d2 ON b.q2 = d2.code_0 GROUP BY d0.code_2, d1.code_1, d2.code_1, b.s0, b.s1;

-- node_top_sizes_only
SELECT d0.code_5 AS g0, d1.code_3 AS g1, d2.code_1 AS g2, sum(b.n) AS n 
FROM veil_base AS b JOIN veil_dim_0 AS d0 ON b.q0 = d0.code_0 JOIN veil_dim_1 AS d1 ON b.q1 = d1.code_0 JOIN veil_dim_2 AS d2 ON b.q2 = d2.code_0 GROUP BY d0.code_5, d1.code_3, d2.code_1;

-- node_subset
SELECT d0.code_1 AS g0, b.q2 AS g2, b.s0, b.s1, sum(b.n) AS n 
FROM veil_base AS b JOIN veil_dim_0 AS d0 ON b.q0 = d0.code_0 GROUP BY d0.code_1, b.q2, b.s0, b.s1;

-- node_rollup
SELECT m0.t AS g0, d1.code_2 AS g1, b.g2 AS g2, b.s0, b.s1, sum(b.n) AS n 
FROM veil_node_4 AS b JOIN (SELECT DISTINCT veil_dim_0.code_1 AS f, veil_dim_0.code_3 AS t 
FROM veil_dim_0) AS m0 ON b.g0 = m0.f JOIN veil_dim_1 AS d1 ON b.g1 = d1.code_0 GROUP BY m0.t, d1.code_2, b.g2, b.s0, b.s1;

-- materialize
CREATE TEMPORARY TABLE veil_node_4 AS SELECT d0.code_1 AS g0, b.q1 AS g1, d2.code_1 AS g2, b.s0, b.s1, sum(b.n) AS n 
FROM veil_base AS b JOIN veil_dim_0 AS d0 ON b.q0 = d0.code_0 JOIN veil_dim_2 AS d2 ON b.q2 = d2.code_0 GROUP BY d0.code_1, b.q1, d2.code_1, b.s0, b.s1;
