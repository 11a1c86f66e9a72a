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
CREATE TEMPORARY TABLE veil_base AS SELECT d0.code_0 AS q0_0, d0.code_1 AS q0_1, d0.code_2 AS q0_2, d0.code_3 AS q0_3, d0.code_4 AS q0_4, d0.code_5 AS q0_5, d1.code_0 AS q1_0, d1.code_1 AS q1_1, d1.code_2 AS q1_2, d1.code_3 AS q1_3, d2.code_0 AS q2_0, d2.code_1 AS q2_1, v0.code AS s0, v1.code AS s1, r.n 
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
SELECT b.q0_0 AS g0, b.q1_0 AS g1, b.q2_0 AS g2, b.s0, b.s1, sum(b.n) AS n 
FROM veil_base AS b GROUP BY b.q0_0, b.q1_0, b.q2_0, b.s0, b.s1;

-- node_figure_2
SELECT b.q0_2 AS g0, b.q1_1 AS g1, b.q2_1 AS g2, b.s0, b.s1, sum(b.n) AS n 
FROM veil_base AS b GROUP BY b.q0_2, b.q1_1, b.q2_1, b.s0, b.s1;

-- node_top_sizes_only
SELECT b.q0_5 AS g0, b.q1_3 AS g1, b.q2_1 AS g2, sum(b.n) AS n 
FROM veil_base AS b GROUP BY b.q0_5, b.q1_3, b.q2_1;

-- node_subset
SELECT b.q0_1 AS g0, b.q2_0 AS g2, b.s0, b.s1, sum(b.n) AS n 
FROM veil_base AS b GROUP BY b.q0_1, b.q2_0, b.s0, b.s1;

-- node_from_materialized
SELECT b.q0_3 AS g0, b.q2_1 AS g2, b.s0, b.s1, sum(b.n) AS n 
FROM veil_node_4 AS b GROUP BY b.q0_3, b.q2_1, b.s0, b.s1;

-- node_packed_for_postgresql
SELECT string_agg(int8send(CAST(p.g0 AS BIGINT)), %(param_1)s) AS g0, string_agg(int8send(CAST(p.g1 AS BIGINT)), %(param_1)s) AS g1, string_agg(int8send(CAST(p.g2 AS BIGINT)), %(param_1)s) AS g2, string_agg(int8send(CAST(p.s0 AS BIGINT)), %(param_1)s) AS s0, string_agg(int8send(CAST(p.s1 AS BIGINT)), %(param_1)s) AS s1, string_agg(int8send(CAST(p.n AS BIGINT)), %(param_1)s) AS n 
FROM (SELECT r.g0 AS g0, r.g1 AS g1, r.g2 AS g2, r.s0 AS s0, r.s1 AS s1, r.n AS n, FLOOR(row_number() OVER () / %(param_2)s::BIGINT) AS chunk 
FROM (SELECT b.q0_2 AS g0, b.q1_1 AS g1, b.q2_1 AS g2, b.s0 AS s0, b.s1 AS s1, sum(b.n) AS n 
FROM veil_base AS b GROUP BY b.q0_2, b.q1_1, b.q2_1, b.s0, b.s1) AS r) AS p GROUP BY p.chunk;

-- node_block_tests
SELECT e.size, CASE WHEN (e.m >= %(m_1)s) THEN %(param_1)s::INTEGER ELSE %(param_2)s::INTEGER END AS ok0, CASE WHEN (e.top = e.low AND e.m >= %(m_2)s) THEN %(param_3)s::INTEGER WHEN (e.top = e.low) THEN %(param_4)s::INTEGER WHEN (ln(CAST(e.size AS DOUBLE PRECISION)) - e.clogc / CAST(CAST(e.size AS DOUBLE PRECISION) AS DOUBLE PRECISION) > %(param_5)s + %(param_6)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_7)s::INTEGER) * (%(ln_1)s::INTEGER + ln(CAST(e.size AS DOUBLE PRECISION)))) THEN %(param_8)s::INTEGER WHEN (ln(CAST(e.size AS DOUBLE PRECISION)) - e.clogc / CAST(CAST(e.size AS DOUBLE PRECISION) AS DOUBLE PRECISION) < %(param_9)s - %(param_6)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_7)s::INTEGER) * (%(ln_1)s::INTEGER + ln(CAST(e.size AS DOUBLE PRECISION)))) THEN %(param_10)s::INTEGER ELSE %(param_11)s::INTEGER END AS ok1, count(*) AS blocks, min(CAST(e.m AS DOUBLE PRECISION)) AS level0, min(CASE WHEN (e.top = e.low) THEN CAST(e.m AS DOUBLE PRECISION) ELSE exp(ln(CAST(e.size AS DOUBLE PRECISION)) - e.clogc / CAST(CAST(e.size AS DOUBLE PRECISION) AS DOUBLE PRECISION)) END) AS level1 
FROM (SELECT sum(c.c) AS size, count(*) AS m, max(c.c) AS top, min(c.c) AS low, sum(CAST(c.c AS DOUBLE PRECISION) * ln(CAST(c.c AS DOUBLE PRECISION))) AS clogc 
FROM (SELECT b.q0_2 AS g0, b.q1_1 AS g1, b.q2_1 AS g2, sum(b.n) AS c 
FROM veil_base AS b GROUP BY b.q0_2, b.q1_1, b.q2_1, b.s1) AS c GROUP BY c.g0, c.g1, c.g2) AS e GROUP BY e.size, CASE WHEN (e.m >= %(m_1)s) THEN %(param_1)s::INTEGER ELSE %(param_2)s::INTEGER END, CASE WHEN (e.top = e.low AND e.m >= %(m_2)s) THEN %(param_3)s::INTEGER WHEN (e.top = e.low) THEN %(param_4)s::INTEGER WHEN (ln(CAST(e.size AS DOUBLE PRECISION)) - e.clogc / CAST(CAST(e.size AS DOUBLE PRECISION) AS DOUBLE PRECISION) > %(param_5)s + %(param_6)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_7)s::INTEGER) * (%(ln_1)s::INTEGER + ln(CAST(e.size AS DOUBLE PRECISION)))) THEN %(param_8)s::INTEGER WHEN (ln(CAST(e.size AS DOUBLE PRECISION)) - e.clogc / CAST(CAST(e.size AS DOUBLE PRECISION) AS DOUBLE PRECISION) < %(param_9)s - %(param_6)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_7)s::INTEGER) * (%(ln_1)s::INTEGER + ln(CAST(e.size AS DOUBLE PRECISION)))) THEN %(param_10)s::INTEGER ELSE %(param_11)s::INTEGER END;

-- node_block_tests_from_materialized
SELECT e.size, CASE WHEN (e.top = e.low AND e.m >= %(m_1)s) THEN %(param_1)s::INTEGER WHEN (e.top = e.low) THEN %(param_2)s::INTEGER WHEN (ln(CAST(e.size AS DOUBLE PRECISION)) - e.clogc / CAST(CAST(e.size AS DOUBLE PRECISION) AS DOUBLE PRECISION) > %(param_3)s + %(param_4)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_5)s::INTEGER) * (%(ln_1)s::INTEGER + ln(CAST(e.size AS DOUBLE PRECISION)))) THEN %(param_6)s::INTEGER WHEN (ln(CAST(e.size AS DOUBLE PRECISION)) - e.clogc / CAST(CAST(e.size AS DOUBLE PRECISION) AS DOUBLE PRECISION) < %(param_7)s - %(param_4)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_5)s::INTEGER) * (%(ln_1)s::INTEGER + ln(CAST(e.size AS DOUBLE PRECISION)))) THEN %(param_8)s::INTEGER ELSE %(param_9)s::INTEGER END AS ok0, count(*) AS blocks, min(CASE WHEN (e.top = e.low) THEN CAST(e.m AS DOUBLE PRECISION) ELSE exp(ln(CAST(e.size AS DOUBLE PRECISION)) - e.clogc / CAST(CAST(e.size AS DOUBLE PRECISION) AS DOUBLE PRECISION)) END) AS level0 
FROM (SELECT sum(c.c) AS size, count(*) AS m, max(c.c) AS top, min(c.c) AS low, sum(CAST(c.c AS DOUBLE PRECISION) * ln(CAST(c.c AS DOUBLE PRECISION))) AS clogc 
FROM (SELECT b.q0_3 AS g0, b.q2_1 AS g2, sum(b.n) AS c 
FROM veil_node_4 AS b GROUP BY b.q0_3, b.q2_1, b.s0) AS c GROUP BY c.g0, c.g2) AS e GROUP BY e.size, CASE WHEN (e.top = e.low AND e.m >= %(m_1)s) THEN %(param_1)s::INTEGER WHEN (e.top = e.low) THEN %(param_2)s::INTEGER WHEN (ln(CAST(e.size AS DOUBLE PRECISION)) - e.clogc / CAST(CAST(e.size AS DOUBLE PRECISION) AS DOUBLE PRECISION) > %(param_3)s + %(param_4)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_5)s::INTEGER) * (%(ln_1)s::INTEGER + ln(CAST(e.size AS DOUBLE PRECISION)))) THEN %(param_6)s::INTEGER WHEN (ln(CAST(e.size AS DOUBLE PRECISION)) - e.clogc / CAST(CAST(e.size AS DOUBLE PRECISION) AS DOUBLE PRECISION) < %(param_7)s - %(param_4)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_5)s::INTEGER) * (%(ln_1)s::INTEGER + ln(CAST(e.size AS DOUBLE PRECISION)))) THEN %(param_8)s::INTEGER ELSE %(param_9)s::INTEGER END;

-- materialize_from_base
CREATE TEMPORARY TABLE veil_node_4 AS SELECT veil_base.q0_1, veil_base.q0_2, veil_base.q0_3, veil_base.q0_4, veil_base.q0_5, veil_base.q2_1, veil_base.s0, veil_base.s1, sum(veil_base.n) AS n 
FROM veil_base GROUP BY veil_base.q0_1, veil_base.q0_2, veil_base.q0_3, veil_base.q0_4, veil_base.q0_5, veil_base.q2_1, veil_base.s0, veil_base.s1;

-- materialize_from_materialized
CREATE TEMPORARY TABLE veil_node_5 AS SELECT veil_node_4.q0_2, veil_node_4.q0_3, veil_node_4.q0_4, veil_node_4.q0_5, veil_node_4.q2_1, veil_node_4.s0, veil_node_4.s1, sum(veil_node_4.n) AS n 
FROM veil_node_4 GROUP BY veil_node_4.q0_2, veil_node_4.q0_3, veil_node_4.q0_4, veil_node_4.q0_5, veil_node_4.q2_1, veil_node_4.s0, veil_node_4.s1;
