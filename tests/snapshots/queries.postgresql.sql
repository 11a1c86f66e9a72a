-- columns_of
SELECT information_schema.columns.column_name, information_schema.columns.data_type, information_schema.columns.numeric_precision, information_schema.columns.numeric_scale 
FROM information_schema.columns 
WHERE information_schema.columns.table_schema = %(param_1)s::VARCHAR AND information_schema.columns.table_name = %(param_2)s::VARCHAR ORDER BY information_schema.columns.ordinal_position;

-- columns_of_default_schema
SELECT information_schema.columns.column_name, information_schema.columns.data_type, information_schema.columns.numeric_precision, information_schema.columns.numeric_scale 
FROM information_schema.columns 
WHERE information_schema.columns.table_schema = current_schema() AND information_schema.columns.table_name = %(param_1)s::VARCHAR ORDER BY information_schema.columns.ordinal_position;

-- source_values
SELECT raw."Patients"."Zip Code" AS v0, raw."Patients".age AS v1, raw."Patients"."x""; DROP TABLE t; --" AS v2, raw."Patients".condition AS v3, raw."Patients".income AS v4, grouping(raw."Patients"."Zip Code") AS k0, grouping(raw."Patients".age) AS k1, grouping(raw."Patients"."x""; DROP TABLE t; --") AS k2, grouping(raw."Patients".condition) AS k3, grouping(raw."Patients".income) AS k4, count(*) AS n, sum(CASE WHEN (raw."Patients"."Zip Code" IS NULL OR raw."Patients".age IS NULL OR raw."Patients"."x""; DROP TABLE t; --" IS NULL OR raw."Patients".condition IS NULL OR raw."Patients".income IS NULL) THEN %(param_1)s::INTEGER ELSE %(param_2)s::INTEGER END) AS complete 
FROM raw."Patients" GROUP BY GROUPING SETS((raw."Patients"."Zip Code"), (raw."Patients".age), (raw."Patients"."x""; DROP TABLE t; --"), (raw."Patients".condition), (raw."Patients".income), ());

-- source_values_null_checked
SELECT raw."Patients"."Zip Code" AS v0, raw."Patients".age AS v1, raw."Patients"."x""; DROP TABLE t; --" AS v2, grouping(raw."Patients"."Zip Code") AS k0, grouping(raw."Patients".age) AS k1, grouping(raw."Patients"."x""; DROP TABLE t; --") AS k2, count(*) AS n, sum(CASE WHEN (raw."Patients".condition IS NULL) THEN %(param_1)s::INTEGER ELSE %(param_2)s::INTEGER END) AS x0, sum(CASE WHEN (raw."Patients"."Zip Code" IS NULL OR raw."Patients".age IS NULL OR raw."Patients"."x""; DROP TABLE t; --" IS NULL OR raw."Patients".condition IS NULL) THEN %(param_3)s::INTEGER ELSE %(param_4)s::INTEGER END) AS complete 
FROM raw."Patients" GROUP BY GROUPING SETS((raw."Patients"."Zip Code"), (raw."Patients".age), (raw."Patients"."x""; DROP TABLE t; --"), ());

-- base_coded
CREATE TEMPORARY TABLE veil_base AS SELECT d0.code_0 AS q0_0, d0.code_1 AS q0_1, d0.code_2 AS q0_2, d0.code_3 AS q0_3, d0.code_4 AS q0_4, d0.code_5 AS q0_5, d1.code_0 AS q1_0, d1.code_1 AS q1_1, d1.code_2 AS q1_2, d1.code_3 AS q1_3, d2.code_0 AS q2_0, d2.code_1 AS q2_1, v0.code AS s0, v1.code AS s1, count(*) AS n 
FROM raw."Patients" AS r JOIN veil_dim_0 AS d0 ON r."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON r.age = d1.level_0 JOIN veil_dim_2 AS d2 ON r."x""; DROP TABLE t; --" = d2.level_0 JOIN veil_sdom_0 AS v0 ON r.condition = v0.value JOIN veil_sdom_1 AS v1 ON r.income = v1.value GROUP BY d0.code_0, d0.code_1, d0.code_2, d0.code_3, d0.code_4, d0.code_5, d1.code_0, d1.code_1, d1.code_2, d1.code_3, d2.code_0, d2.code_1, v0.code, v1.code;

-- source_grouped
SELECT raw."Patients"."Zip Code", raw."Patients".age, raw."Patients"."x""; DROP TABLE t; --", raw."Patients".condition, count(*) AS veil_rows 
FROM raw."Patients" GROUP BY raw."Patients"."Zip Code", raw."Patients".age, raw."Patients"."x""; DROP TABLE t; --", raw."Patients".condition;

-- source_cells
SELECT raw."Patients"."Zip Code" AS v0, raw."Patients".age AS v1, raw."Patients"."x""; DROP TABLE t; --" AS v2, raw."Patients".condition IS NULL AS x0, count(*) AS n 
FROM raw."Patients" GROUP BY raw."Patients"."Zip Code", raw."Patients".age, raw."Patients"."x""; DROP TABLE t; --", raw."Patients".condition IS NULL;

-- source_cells_grouped
SELECT veil_source."Zip Code" AS v0, veil_source.age AS v1, veil_source."x""; DROP TABLE t; --" AS v2, veil_source.condition IS NULL AS x0, CAST(coalesce(sum(veil_source.veil_rows), %(coalesce_1)s::INTEGER) AS BIGINT) AS n 
FROM veil_source GROUP BY veil_source."Zip Code", veil_source.age, veil_source."x""; DROP TABLE t; --", veil_source.condition IS NULL;

-- source_rows
SELECT count(*) AS n 
FROM raw."Patients";

-- source_values_grouped
SELECT veil_source."Zip Code" AS v0, veil_source.age AS v1, veil_source."x""; DROP TABLE t; --" AS v2, grouping(veil_source."Zip Code") AS k0, grouping(veil_source.age) AS k1, grouping(veil_source."x""; DROP TABLE t; --") AS k2, CAST(coalesce(sum(veil_source.veil_rows), %(coalesce_1)s::INTEGER) AS BIGINT) AS n, sum(CASE WHEN (veil_source.condition IS NULL) THEN veil_source.veil_rows ELSE %(param_1)s::INTEGER END) AS x0, sum(CASE WHEN (veil_source."Zip Code" IS NULL OR veil_source.age IS NULL OR veil_source."x""; DROP TABLE t; --" IS NULL OR veil_source.condition IS NULL) THEN %(param_2)s::INTEGER ELSE veil_source.veil_rows END) AS complete 
FROM veil_source GROUP BY GROUPING SETS((veil_source."Zip Code"), (veil_source.age), (veil_source."x""; DROP TABLE t; --"), ());

-- base_coded_grouped
CREATE TEMPORARY TABLE veil_base AS SELECT d0.code_0 AS q0_0, d0.code_1 AS q0_1, d0.code_2 AS q0_2, d0.code_3 AS q0_3, d0.code_4 AS q0_4, d0.code_5 AS q0_5, d1.code_0 AS q1_0, d1.code_1 AS q1_1, d1.code_2 AS q1_2, d1.code_3 AS q1_3, d2.code_0 AS q2_0, d2.code_1 AS q2_1, v0.code AS s0, CAST(coalesce(sum(r.veil_rows), %(coalesce_1)s::INTEGER) AS BIGINT) AS n 
FROM veil_source AS r JOIN veil_dim_0 AS d0 ON r."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON r.age = d1.level_0 JOIN veil_dim_2 AS d2 ON r."x""; DROP TABLE t; --" = d2.level_0 JOIN veil_sdom_0 AS v0 ON r.condition = v0.value GROUP BY d0.code_0, d0.code_1, d0.code_2, d0.code_3, d0.code_4, d0.code_5, d1.code_0, d1.code_1, d1.code_2, d1.code_3, d2.code_0, d2.code_1, v0.code;

-- base_coded_sizes_only_narrowed
CREATE TEMPORARY TABLE veil_base AS SELECT CAST(d0.code_0 AS INTEGER) AS q0_0, CAST(d0.code_1 AS SMALLINT) AS q0_1, CAST(d0.code_2 AS SMALLINT) AS q0_2, CAST(d0.code_3 AS SMALLINT) AS q0_3, CAST(d0.code_4 AS SMALLINT) AS q0_4, CAST(d0.code_5 AS SMALLINT) AS q0_5, CAST(d1.code_0 AS SMALLINT) AS q1_0, CAST(d1.code_1 AS SMALLINT) AS q1_1, CAST(d1.code_2 AS SMALLINT) AS q1_2, CAST(d1.code_3 AS SMALLINT) AS q1_3, CAST(d2.code_0 AS SMALLINT) AS q2_0, CAST(d2.code_1 AS SMALLINT) AS q2_1, count(*) AS n 
FROM raw."Patients" AS r JOIN veil_dim_0 AS d0 ON r."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON r.age = d1.level_0 JOIN veil_dim_2 AS d2 ON r."x""; DROP TABLE t; --" = d2.level_0 
WHERE r.condition IS NOT NULL GROUP BY d0.code_0, d0.code_1, d0.code_2, d0.code_3, d0.code_4, d0.code_5, d1.code_0, d1.code_1, d1.code_2, d1.code_3, d2.code_0, d2.code_1;

-- dimension_ddl
CREATE TEMPORARY TABLE veil_dim_0 (
	level_0 TEXT, 
	level_1 TEXT, 
	level_2 TEXT, 
	level_3 TEXT, 
	level_4 TEXT, 
	level_5 TEXT, 
	code_0 INTEGER NOT NULL, 
	code_1 INTEGER, 
	code_2 INTEGER, 
	code_3 INTEGER, 
	code_4 INTEGER, 
	code_5 INTEGER, 
	PRIMARY KEY (code_0)
);

-- node_bottom
SELECT b.q0_0 AS g0, b.q1_0 AS g1, b.q2_0 AS g2, b.s0, b.s1, sum(b.n) AS n 
FROM veil_base AS b GROUP BY b.q0_0, b.q1_0, b.q2_0, b.s0, b.s1;

-- leaf_totals
SELECT t.qi, t.code, t.n 
FROM (SELECT %(param_1)s::INTEGER AS qi, veil_base.q0_0 AS code, sum(veil_base.n) AS n 
FROM veil_base GROUP BY veil_base.q0_0 UNION ALL SELECT %(param_2)s::INTEGER AS qi, veil_base.q1_0 AS code, sum(veil_base.n) AS n 
FROM veil_base GROUP BY veil_base.q1_0 UNION ALL SELECT %(param_3)s::INTEGER AS qi, veil_base.q2_0 AS code, sum(veil_base.n) AS n 
FROM veil_base GROUP BY veil_base.q2_0) AS t;

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
SELECT u0.u3 AS g0, b.q2_1 AS g2, b.s0, b.s1, sum(b.n) AS n 
FROM veil_node_4 AS b JOIN veil_up_0_1 AS u0 ON u0.c = b.q0_1 GROUP BY u0.u3, b.q2_1, b.s0, b.s1;

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
FROM (SELECT u0.u3 AS g0, b.q2_1 AS g2, sum(b.n) AS c 
FROM veil_node_4 AS b JOIN veil_up_0_1 AS u0 ON u0.c = b.q0_1 GROUP BY u0.u3, b.q2_1, b.s0) AS c GROUP BY c.g0, c.g2) AS e GROUP BY e.size, CASE WHEN (e.top = e.low AND e.m >= %(m_1)s) THEN %(param_1)s::INTEGER WHEN (e.top = e.low) THEN %(param_2)s::INTEGER WHEN (ln(CAST(e.size AS DOUBLE PRECISION)) - e.clogc / CAST(CAST(e.size AS DOUBLE PRECISION) AS DOUBLE PRECISION) > %(param_3)s + %(param_4)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_5)s::INTEGER) * (%(ln_1)s::INTEGER + ln(CAST(e.size AS DOUBLE PRECISION)))) THEN %(param_6)s::INTEGER WHEN (ln(CAST(e.size AS DOUBLE PRECISION)) - e.clogc / CAST(CAST(e.size AS DOUBLE PRECISION) AS DOUBLE PRECISION) < %(param_7)s - %(param_4)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_5)s::INTEGER) * (%(ln_1)s::INTEGER + ln(CAST(e.size AS DOUBLE PRECISION)))) THEN %(param_8)s::INTEGER ELSE %(param_9)s::INTEGER END;

-- distance_positions_table
CREATE TEMPORARY TABLE veil_emd_1 (
	pos BIGINT, 
	r BIGINT, 
	c BIGINT, 
	i BIGINT
);

-- distance_inverse_table
CREATE TEMPORARY TABLE veil_emdinv_1 (
	beta BIGINT, 
	lo BIGINT, 
	ilo BIGINT, 
	cnt BIGINT
);

-- distance_buckets_table
CREATE TEMPORARY TABLE veil_emdbkt_1 (
	k BIGINT, 
	u BIGINT, 
	i BIGINT, 
	c BIGINT, 
	p BIGINT, 
	u1 BIGINT, 
	i1 BIGINT, 
	c1 BIGINT, 
	p1 BIGINT
);

-- node_distance_tests
SELECT e.size, CASE WHEN (e.ordered_num / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_1)s * %(param_2)s) AS DOUBLE PRECISION) <= %(param_3)s - (%(param_4)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_5)s) + (%(param_6)s * CAST(e.slack AS DOUBLE PRECISION)) / CAST(%(param_7)s AS DOUBLE PRECISION))) THEN %(param_8)s::INTEGER WHEN (e.ordered_num / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_1)s * %(param_2)s) AS DOUBLE PRECISION) > %(param_9)s + %(param_4)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_5)s) + (%(param_6)s * CAST(e.slack AS DOUBLE PRECISION)) / CAST(%(param_7)s AS DOUBLE PRECISION)) THEN %(param_10)s::INTEGER ELSE %(param_11)s::INTEGER END AS ok0, CASE WHEN (e.equal_num / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_12)s) AS DOUBLE PRECISION) <= %(param_13)s - %(param_14)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_15)s)) THEN %(param_16)s::INTEGER WHEN (e.equal_num / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_12)s) AS DOUBLE PRECISION) > %(param_17)s + %(param_14)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_15)s)) THEN %(param_18)s::INTEGER ELSE %(param_19)s::INTEGER END AS ok1, count(*) AS blocks, max(e.ordered_num / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_1)s * %(param_2)s) AS DOUBLE PRECISION)) AS level0, max(e.equal_num / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_12)s) AS DOUBLE PRECISION)) AS level1 
FROM (SELECT sum(c.c) AS size, count(*) AS m, max(c.c) AS top, min(c.c) AS low, sum(CAST(c.c AS DOUBLE PRECISION) * ln(CAST(c.c AS DOUBLE PRECISION))) AS clogc, sum(c.run) + CAST(min(c.ia) AS DOUBLE PRECISION) * CAST(sum(c.c) AS DOUBLE PRECISION) AS ordered_num, sum(c.slack) AS slack, sum(c."over") AS equal_num 
FROM (SELECT w.g AS g, w.c AS c, w.ia AS ia, ((CAST(w.cum AS DOUBLE PRECISION) * %(param_20)s * (CASE WHEN (v.lo < w.a) THEN w.a WHEN (v.lo > w.b) THEN w.b ELSE v.lo END - w.a) - CAST(w.size AS DOUBLE PRECISION) * CAST(CASE WHEN (v.lo < w.a) THEN w.ia WHEN (v.lo > w.b) THEN w.ib ELSE v.ilo END - w.ia AS DOUBLE PRECISION)) + CAST(w.size AS DOUBLE PRECISION) * CAST(w.ib - CASE WHEN (v.lo < w.a) THEN w.ia WHEN (v.lo > w.b) THEN w.ib ELSE v.ilo END AS DOUBLE PRECISION)) - CAST(w.cum AS DOUBLE PRECISION) * %(param_20)s * (w.b - CASE WHEN (v.lo < w.a) THEN w.a WHEN (v.lo > w.b) THEN w.b ELSE v.lo END) AS run, v.cnt AS slack, CASE WHEN (CAST(w.c AS DOUBLE PRECISION) * %(param_21)s - CAST(w.big_r AS DOUBLE PRECISION) * CAST(w.size AS DOUBLE PRECISION) > %(param_22)s::INTEGER) THEN CAST(w.c AS DOUBLE PRECISION) * %(param_21)s - CAST(w.big_r AS DOUBLE PRECISION) * CAST(w.size AS DOUBLE PRECISION) ELSE %(param_23)s END AS "over" 
FROM (SELECT c.g AS g, c.s AS a, c.c AS c, p.i AS ia, p.r AS big_r, sum(c.c) OVER (PARTITION BY c.g ORDER BY c.s ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cum, sum(c.c) OVER (PARTITION BY c.g ORDER BY c.s ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS size, lead(c.s, %(lead_1)s::INTEGER, %(param_24)s::BIGINT) OVER (PARTITION BY c.g ORDER BY c.s) AS b, lead(p.i, %(lead_2)s::INTEGER, %(param_25)s::BIGINT) OVER (PARTITION BY c.g ORDER BY c.s) AS ib 
FROM (SELECT (CAST(b.q0_2 AS BIGINT) * %(param_26)s::BIGINT + b.q1_1) * %(param_27)s::BIGINT + b.q2_1 AS g, b.s1 AS s, sum(b.n) AS c 
FROM veil_base AS b GROUP BY (CAST(b.q0_2 AS BIGINT) * %(param_26)s::BIGINT + b.q1_1) * %(param_27)s::BIGINT + b.q2_1, b.s1) AS c JOIN veil_emd_1 AS p ON p.pos = c.s) AS w JOIN veil_emdinv_1 AS v ON v.beta = CAST(floor((CAST(w.cum AS DOUBLE PRECISION) * %(param_28)s) / CAST(CAST(w.size AS DOUBLE PRECISION) AS DOUBLE PRECISION)) AS BIGINT)) AS c GROUP BY c.g) AS e GROUP BY e.size, CASE WHEN (e.ordered_num / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_1)s * %(param_2)s) AS DOUBLE PRECISION) <= %(param_3)s - (%(param_4)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_5)s) + (%(param_6)s * CAST(e.slack AS DOUBLE PRECISION)) / CAST(%(param_7)s AS DOUBLE PRECISION))) THEN %(param_8)s::INTEGER WHEN (e.ordered_num / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_1)s * %(param_2)s) AS DOUBLE PRECISION) > %(param_9)s + %(param_4)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_5)s) + (%(param_6)s * CAST(e.slack AS DOUBLE PRECISION)) / CAST(%(param_7)s AS DOUBLE PRECISION)) THEN %(param_10)s::INTEGER ELSE %(param_11)s::INTEGER END, CASE WHEN (e.equal_num / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_12)s) AS DOUBLE PRECISION) <= %(param_13)s - %(param_14)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_15)s)) THEN %(param_16)s::INTEGER WHEN (e.equal_num / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_12)s) AS DOUBLE PRECISION) > %(param_17)s + %(param_14)s * (CAST(e.m AS DOUBLE PRECISION) + %(param_15)s)) THEN %(param_18)s::INTEGER ELSE %(param_19)s::INTEGER END;

-- node_distance_bounds
SELECT e.size, CASE WHEN (e.hi / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_1)s * %(param_2)s) AS DOUBLE PRECISION) <= %(param_3)s - %(param_4)s * (CAST(e.rows AS DOUBLE PRECISION) + %(param_5)s)) THEN %(param_6)s::INTEGER WHEN (e.lo / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_1)s * %(param_2)s) AS DOUBLE PRECISION) > %(param_7)s + %(param_4)s * (CAST(e.rows AS DOUBLE PRECISION) + %(param_5)s)) THEN %(param_8)s::INTEGER ELSE %(param_9)s::INTEGER END AS ok0, count(*) AS blocks, max(e.hi / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_1)s * %(param_2)s) AS DOUBLE PRECISION)) AS level0 
FROM (SELECT sum(c.c) AS size, count(*) AS rows, sum(c.hi) + min(c.lead) AS hi, sum(c.lo) + min(c.lead) AS lo 
FROM (SELECT w.g0 AS g0, w.g2 AS g2, w.c AS c, least((%(param_10)s * (CAST(t.u1 - t.u AS DOUBLE PRECISION) * CAST(w.cum - w.c AS DOUBLE PRECISION) + CAST(w.mom AS DOUBLE PRECISION)) - CAST(w.size AS DOUBLE PRECISION) * CAST(t.i1 - t.i AS DOUBLE PRECISION)) + %(param_11)s * CAST(t.u1 - t.u AS DOUBLE PRECISION) * CASE WHEN (CAST(w.size AS DOUBLE PRECISION) * CAST(t.p1 AS DOUBLE PRECISION) - CAST(w.cum - w.c AS DOUBLE PRECISION) * %(param_12)s > %(param_13)s::INTEGER) THEN CAST(w.size AS DOUBLE PRECISION) * CAST(t.p1 AS DOUBLE PRECISION) - CAST(w.cum - w.c AS DOUBLE PRECISION) * %(param_12)s ELSE %(param_14)s END, -(%(param_10)s * (CAST(t.u1 - t.u AS DOUBLE PRECISION) * CAST(w.cum - w.c AS DOUBLE PRECISION) + CAST(w.mom AS DOUBLE PRECISION)) - CAST(w.size AS DOUBLE PRECISION) * CAST(t.i1 - t.i AS DOUBLE PRECISION)) + %(param_15)s * CAST(t.u1 - t.u AS DOUBLE PRECISION) * CASE WHEN (CAST(w.cum AS DOUBLE PRECISION) * %(param_16)s - CAST(w.size AS DOUBLE PRECISION) * CAST(t.c AS DOUBLE PRECISION) > %(param_17)s::INTEGER) THEN CAST(w.cum AS DOUBLE PRECISION) * %(param_16)s - CAST(w.size AS DOUBLE PRECISION) * CAST(t.c AS DOUBLE PRECISION) ELSE %(param_18)s END) + least((CAST(x.u - t.u1 AS DOUBLE PRECISION) * CAST(w.cum AS DOUBLE PRECISION) * %(param_16)s - CAST(w.size AS DOUBLE PRECISION) * CAST(x.i - t.i1 AS DOUBLE PRECISION)) + %(param_19)s * CAST(x.u - t.u1 AS DOUBLE PRECISION) * CASE WHEN (CAST(w.size AS DOUBLE PRECISION) * CAST(x.p AS DOUBLE PRECISION) - CAST(w.cum AS DOUBLE PRECISION) * %(param_16)s > %(param_20)s::INTEGER) THEN CAST(w.size AS DOUBLE PRECISION) * CAST(x.p AS DOUBLE PRECISION) - CAST(w.cum AS DOUBLE PRECISION) * %(param_16)s ELSE %(param_21)s END, -(CAST(x.u - t.u1 AS DOUBLE PRECISION) * CAST(w.cum AS DOUBLE PRECISION) * %(param_16)s - CAST(w.size AS DOUBLE PRECISION) * CAST(x.i - t.i1 AS DOUBLE PRECISION)) + %(param_22)s * CAST(x.u - t.u1 AS DOUBLE PRECISION) * CASE WHEN (CAST(w.cum AS DOUBLE PRECISION) * %(param_16)s - CAST(w.size AS DOUBLE PRECISION) * CAST(t.c1 AS DOUBLE PRECISION) > %(param_23)s::INTEGER) THEN CAST(w.cum AS DOUBLE PRECISION) * %(param_16)s - CAST(w.size AS DOUBLE PRECISION) * CAST(t.c1 AS DOUBLE PRECISION) ELSE %(param_24)s END) AS hi, abs(%(param_10)s * (CAST(t.u1 - t.u AS DOUBLE PRECISION) * CAST(w.cum - w.c AS DOUBLE PRECISION) + CAST(w.mom AS DOUBLE PRECISION)) - CAST(w.size AS DOUBLE PRECISION) * CAST(t.i1 - t.i AS DOUBLE PRECISION)) + abs(CAST(x.u - t.u1 AS DOUBLE PRECISION) * CAST(w.cum AS DOUBLE PRECISION) * %(param_16)s - CAST(w.size AS DOUBLE PRECISION) * CAST(x.i - t.i1 AS DOUBLE PRECISION)) AS lo, CAST(w.size AS DOUBLE PRECISION) * CAST(t.i AS DOUBLE PRECISION) AS lead 
FROM (SELECT c.g0 AS g0, c.g2 AS g2, c.k AS k, c.c AS c, c.mom AS mom, sum(c.c) OVER (PARTITION BY c.g0, c.g2 ORDER BY c.k ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cum, sum(c.c) OVER (PARTITION BY c.g0, c.g2 ORDER BY c.k ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS size, lead(c.k, %(lead_1)s::INTEGER, %(param_25)s::BIGINT) OVER (PARTITION BY c.g0, c.g2 ORDER BY c.k) AS nk 
FROM (SELECT u0.u2 AS g0, b.q2_1 AS g2, CAST(floor(CAST(CAST(b.s1 AS BIGINT) AS DOUBLE PRECISION) / CAST(%(param_26)s AS DOUBLE PRECISION)) AS BIGINT) AS k, sum(b.n) AS c, sum(b.n * (least((CAST(floor(CAST(CAST(b.s1 AS BIGINT) AS DOUBLE PRECISION) / CAST(%(param_26)s AS DOUBLE PRECISION)) AS BIGINT) + %(param_27)s::BIGINT) * %(param_28)s::BIGINT, %(least_1)s::INTEGER) - CAST(b.s1 AS BIGINT))) AS mom 
FROM veil_node_4 AS b JOIN veil_up_0_1 AS u0 ON u0.c = b.q0_1 GROUP BY u0.u2, b.q2_1, CAST(floor(CAST(CAST(b.s1 AS BIGINT) AS DOUBLE PRECISION) / CAST(%(param_26)s AS DOUBLE PRECISION)) AS BIGINT)) AS c) AS w JOIN veil_emdbkt_1 AS t ON t.k = w.k JOIN veil_emdbkt_1 AS x ON x.k = w.nk) AS c GROUP BY c.g0, c.g2) AS e GROUP BY e.size, CASE WHEN (e.hi / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_1)s * %(param_2)s) AS DOUBLE PRECISION) <= %(param_3)s - %(param_4)s * (CAST(e.rows AS DOUBLE PRECISION) + %(param_5)s)) THEN %(param_6)s::INTEGER WHEN (e.lo / CAST((CAST(e.size AS DOUBLE PRECISION) * %(param_1)s * %(param_2)s) AS DOUBLE PRECISION) > %(param_7)s + %(param_4)s * (CAST(e.rows AS DOUBLE PRECISION) + %(param_5)s)) THEN %(param_8)s::INTEGER ELSE %(param_9)s::INTEGER END;

-- materialize_from_base
CREATE TEMPORARY TABLE veil_node_4 AS SELECT b.q0_1 AS q0_1, b.q2_1 AS q2_1, b.s0, b.s1, CAST(sum(b.n) AS BIGINT) AS n 
FROM veil_base AS b GROUP BY b.q0_1, b.q2_1, b.s0, b.s1;

-- materialize_from_materialized
CREATE TEMPORARY TABLE veil_node_5 AS SELECT u0.u2 AS q0_2, b.q2_1 AS q2_1, b.s0, b.s1, CAST(sum(b.n) AS BIGINT) AS n 
FROM veil_node_4 AS b JOIN veil_up_0_1 AS u0 ON u0.c = b.q0_1 GROUP BY u0.u2, b.q2_1, b.s0, b.s1;

-- up_table
CREATE TEMPORARY TABLE veil_up_0_1 AS SELECT DISTINCT d.code_1 AS c, d.code_2 AS u2, d.code_3 AS u3, d.code_4 AS u4, d.code_5 AS u5 
FROM veil_dim_0 AS d;

-- node_read_from_its_own_table
SELECT b.q0_1 AS g0, b.q2_1 AS g2, b.s0, b.s1, b.n 
FROM veil_node_4 AS b;

-- node_sizes_from_its_own_table
SELECT e.size, count(*) AS blocks 
FROM (SELECT b.n AS size 
FROM veil_node_4 AS b) AS e GROUP BY e.size ORDER BY e.size;

-- node_sizes_from_the_cells
SELECT e.size, count(*) AS blocks 
FROM (SELECT sum(b.n) AS size 
FROM veil_base AS b GROUP BY b.q0_2, b.q1_1, b.q2_1) AS e GROUP BY e.size ORDER BY e.size;

-- hub_of_the_blocks
CREATE TEMPORARY TABLE veil_node_6 AS SELECT b.q0_1 AS q0_1, b.q1_0 AS q1_0, b.q2_1 AS q2_1, CAST(sum(b.n) AS BIGINT) AS n 
FROM veil_base AS b GROUP BY b.q0_1, b.q1_0, b.q2_1;

-- grouped_sizes_from_the_base
SELECT e.gid, e.size, count(*) AS blocks 
FROM (SELECT grouping(b.q0_1) * %(param_1)s::INTEGER + grouping(b.q0_2) * %(param_2)s::INTEGER + grouping(b.q1_0) * %(param_3)s::INTEGER + grouping(b.q1_1) * %(param_4)s::INTEGER + grouping(b.q2_0) * %(param_5)s::INTEGER + grouping(b.q2_1) * %(param_6)s::INTEGER AS gid, sum(b.n) AS size 
FROM veil_base AS b GROUP BY GROUPING SETS((b.q0_1, b.q1_0, b.q2_1), (b.q0_2, b.q1_1, b.q2_1), (b.q0_1, b.q2_0))) AS e GROUP BY e.gid, e.size;

-- grouped_sizes_from_materialized
SELECT e.gid, e.size, count(*) AS blocks 
FROM (SELECT grouping(b.q0_1) * %(param_1)s::INTEGER + grouping(u0.u2) * %(param_2)s::INTEGER + grouping(u0.u3) * %(param_3)s::INTEGER + grouping(b.q1_0) * %(param_4)s::INTEGER + grouping(u1.u1) * %(param_5)s::INTEGER + grouping(b.q2_1) * %(param_6)s::INTEGER AS gid, sum(b.n) AS size 
FROM veil_node_4 AS b JOIN veil_up_0_1 AS u0 ON u0.c = b.q0_1 JOIN veil_up_1_0 AS u1 ON u1.c = b.q1_0 GROUP BY GROUPING SETS((u0.u2, u1.u1, b.q2_1), (u0.u3, b.q2_1), (b.q0_1, b.q1_0, b.q2_1))) AS e GROUP BY e.gid, e.size;

-- no_progress_bar
SET enable_progress_bar = false;

-- cells_with_nulls
CREATE TEMPORARY TABLE veil_cells AS SELECT d0.code_1 AS g0, d1.code_0 AS g1, d2.code_1 AS g2, r.vid AS vid, count(*) AS n 
FROM raw."Patients" AS src JOIN veil_dim_0 AS d0 ON src."Zip Code" = d0.level_0 JOIN veil_dim_1 AS d1 ON src.age = d1.level_0 JOIN veil_dim_2 AS d2 ON src."x""; DROP TABLE t; --" = d2.level_0 JOIN veil_cell_values AS r ON src.condition = r.v0 AND coalesce(src.income, (SELECT min(veil_cell_values.v1) AS min_1 
FROM veil_cell_values)) = coalesce(r.v1, (SELECT min(veil_cell_values.v1) AS min_1 
FROM veil_cell_values)) AND (src.income IS NULL) = (r.v1 IS NULL) GROUP BY d0.code_1, d1.code_0, d2.code_1, r.vid;

-- base_total
SELECT coalesce(sum(veil_base.n), %(coalesce_2)s::INTEGER) AS coalesce_1, count(*) AS count_1 
FROM veil_base;

-- stream_ordered
SELECT o.g0, o.g1, o.g2, o.s0, o.s1, o.n 
FROM (SELECT b.q0_2 AS g0, b.q1_1 AS g1, b.q2_1 AS g2, b.s0 AS s0, b.s1 AS s1, sum(b.n) AS n 
FROM veil_base AS b GROUP BY b.q0_2, b.q1_1, b.q2_1, b.s0, b.s1) AS o ORDER BY o.g0, o.g1, o.g2;

-- census_table
CREATE TABLE raw.census (
	person_id BIGINT, 
	age INTEGER, 
	sex TEXT, 
	race TEXT, 
	marital_status TEXT, 
	education TEXT, 
	zip TEXT, 
	occupation TEXT, 
	income INTEGER
);
