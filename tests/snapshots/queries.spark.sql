-- source_values
SELECT `raw`.`Patients`.`Zip Code` AS `v0`, `raw`.`Patients`.`age` AS `v1`, `raw`.`Patients`.`x"; DROP TABLE t; --` AS `v2`, `raw`.`Patients`.`condition` AS `v3`, `raw`.`Patients`.`income` AS `v4`, grouping(`raw`.`Patients`.`Zip Code`) AS `k0`, grouping(`raw`.`Patients`.`age`) AS `k1`, grouping(`raw`.`Patients`.`x"; DROP TABLE t; --`) AS `k2`, grouping(`raw`.`Patients`.`condition`) AS `k3`, grouping(`raw`.`Patients`.`income`) AS `k4`, count(*) AS `n`, sum(CASE WHEN (`raw`.`Patients`.`Zip Code` IS NULL OR `raw`.`Patients`.`age` IS NULL OR `raw`.`Patients`.`x"; DROP TABLE t; --` IS NULL OR `raw`.`Patients`.`condition` IS NULL OR `raw`.`Patients`.`income` IS NULL) THEN :param_1 ELSE :param_2 END) AS `complete` 
FROM `raw`.`Patients` GROUP BY GROUPING SETS((`raw`.`Patients`.`Zip Code`), (`raw`.`Patients`.`age`), (`raw`.`Patients`.`x"; DROP TABLE t; --`), (`raw`.`Patients`.`condition`), (`raw`.`Patients`.`income`), ());

-- source_values_null_checked
SELECT `raw`.`Patients`.`Zip Code` AS `v0`, `raw`.`Patients`.`age` AS `v1`, `raw`.`Patients`.`x"; DROP TABLE t; --` AS `v2`, grouping(`raw`.`Patients`.`Zip Code`) AS `k0`, grouping(`raw`.`Patients`.`age`) AS `k1`, grouping(`raw`.`Patients`.`x"; DROP TABLE t; --`) AS `k2`, count(*) AS `n`, sum(CASE WHEN (`raw`.`Patients`.`condition` IS NULL) THEN :param_1 ELSE :param_2 END) AS `x0`, sum(CASE WHEN (`raw`.`Patients`.`Zip Code` IS NULL OR `raw`.`Patients`.`age` IS NULL OR `raw`.`Patients`.`x"; DROP TABLE t; --` IS NULL OR `raw`.`Patients`.`condition` IS NULL) THEN :param_3 ELSE :param_4 END) AS `complete` 
FROM `raw`.`Patients` GROUP BY GROUPING SETS((`raw`.`Patients`.`Zip Code`), (`raw`.`Patients`.`age`), (`raw`.`Patients`.`x"; DROP TABLE t; --`), ());

-- base_coded
CACHE TABLE `veil_base` AS SELECT `d0`.`code_0` AS `q0_0`, `d0`.`code_1` AS `q0_1`, `d0`.`code_2` AS `q0_2`, `d0`.`code_3` AS `q0_3`, `d0`.`code_4` AS `q0_4`, `d0`.`code_5` AS `q0_5`, `d1`.`code_0` AS `q1_0`, `d1`.`code_1` AS `q1_1`, `d1`.`code_2` AS `q1_2`, `d1`.`code_3` AS `q1_3`, `d2`.`code_0` AS `q2_0`, `d2`.`code_1` AS `q2_1`, `v0`.`code` AS `s0`, `v1`.`code` AS `s1`, count(*) AS `n` 
FROM `raw`.`Patients` AS `r` JOIN `veil_dim_0` AS `d0` ON `r`.`Zip Code` = `d0`.`level_0` JOIN `veil_dim_1` AS `d1` ON `r`.`age` = `d1`.`level_0` JOIN `veil_dim_2` AS `d2` ON `r`.`x"; DROP TABLE t; --` = `d2`.`level_0` JOIN `veil_sdom_0` AS `v0` ON `r`.`condition` = `v0`.`value` JOIN `veil_sdom_1` AS `v1` ON `r`.`income` = `v1`.`value` GROUP BY `d0`.`code_0`, `d0`.`code_1`, `d0`.`code_2`, `d0`.`code_3`, `d0`.`code_4`, `d0`.`code_5`, `d1`.`code_0`, `d1`.`code_1`, `d1`.`code_2`, `d1`.`code_3`, `d2`.`code_0`, `d2`.`code_1`, `v0`.`code`, `v1`.`code`;

-- source_grouped
SELECT `raw`.`Patients`.`Zip Code`, `raw`.`Patients`.`age`, `raw`.`Patients`.`x"; DROP TABLE t; --`, `raw`.`Patients`.`condition`, count(*) AS `veil_rows` 
FROM `raw`.`Patients` GROUP BY `raw`.`Patients`.`Zip Code`, `raw`.`Patients`.`age`, `raw`.`Patients`.`x"; DROP TABLE t; --`, `raw`.`Patients`.`condition`;

-- source_cells
SELECT `raw`.`Patients`.`Zip Code` AS `v0`, `raw`.`Patients`.`age` AS `v1`, `raw`.`Patients`.`x"; DROP TABLE t; --` AS `v2`, `raw`.`Patients`.`condition` IS NULL AS `x0`, count(*) AS `n` 
FROM `raw`.`Patients` GROUP BY `raw`.`Patients`.`Zip Code`, `raw`.`Patients`.`age`, `raw`.`Patients`.`x"; DROP TABLE t; --`, `raw`.`Patients`.`condition` IS NULL;

-- source_cells_grouped
SELECT `veil_source`.`Zip Code` AS `v0`, `veil_source`.`age` AS `v1`, `veil_source`.`x"; DROP TABLE t; --` AS `v2`, `veil_source`.`condition` IS NULL AS `x0`, CAST(coalesce(sum(`veil_source`.`veil_rows`), :coalesce_1) AS BIGINT) AS `n` 
FROM `veil_source` GROUP BY `veil_source`.`Zip Code`, `veil_source`.`age`, `veil_source`.`x"; DROP TABLE t; --`, `veil_source`.`condition` IS NULL;

-- source_rows
SELECT count(*) AS `n` 
FROM `raw`.`Patients`;

-- source_values_grouped
SELECT `veil_source`.`Zip Code` AS `v0`, `veil_source`.`age` AS `v1`, `veil_source`.`x"; DROP TABLE t; --` AS `v2`, grouping(`veil_source`.`Zip Code`) AS `k0`, grouping(`veil_source`.`age`) AS `k1`, grouping(`veil_source`.`x"; DROP TABLE t; --`) AS `k2`, CAST(coalesce(sum(`veil_source`.`veil_rows`), :coalesce_1) AS BIGINT) AS `n`, sum(CASE WHEN (`veil_source`.`condition` IS NULL) THEN `veil_source`.`veil_rows` ELSE :param_1 END) AS `x0`, sum(CASE WHEN (`veil_source`.`Zip Code` IS NULL OR `veil_source`.`age` IS NULL OR `veil_source`.`x"; DROP TABLE t; --` IS NULL OR `veil_source`.`condition` IS NULL) THEN :param_2 ELSE `veil_source`.`veil_rows` END) AS `complete` 
FROM `veil_source` GROUP BY GROUPING SETS((`veil_source`.`Zip Code`), (`veil_source`.`age`), (`veil_source`.`x"; DROP TABLE t; --`), ());

-- base_coded_grouped
CACHE TABLE `veil_base` AS SELECT `d0`.`code_0` AS `q0_0`, `d0`.`code_1` AS `q0_1`, `d0`.`code_2` AS `q0_2`, `d0`.`code_3` AS `q0_3`, `d0`.`code_4` AS `q0_4`, `d0`.`code_5` AS `q0_5`, `d1`.`code_0` AS `q1_0`, `d1`.`code_1` AS `q1_1`, `d1`.`code_2` AS `q1_2`, `d1`.`code_3` AS `q1_3`, `d2`.`code_0` AS `q2_0`, `d2`.`code_1` AS `q2_1`, `v0`.`code` AS `s0`, CAST(coalesce(sum(`r`.`veil_rows`), :coalesce_1) AS BIGINT) AS `n` 
FROM `veil_source` AS `r` JOIN `veil_dim_0` AS `d0` ON `r`.`Zip Code` = `d0`.`level_0` JOIN `veil_dim_1` AS `d1` ON `r`.`age` = `d1`.`level_0` JOIN `veil_dim_2` AS `d2` ON `r`.`x"; DROP TABLE t; --` = `d2`.`level_0` JOIN `veil_sdom_0` AS `v0` ON `r`.`condition` = `v0`.`value` GROUP BY `d0`.`code_0`, `d0`.`code_1`, `d0`.`code_2`, `d0`.`code_3`, `d0`.`code_4`, `d0`.`code_5`, `d1`.`code_0`, `d1`.`code_1`, `d1`.`code_2`, `d1`.`code_3`, `d2`.`code_0`, `d2`.`code_1`, `v0`.`code`;

-- base_coded_sizes_only_narrowed
CACHE TABLE `veil_base` AS SELECT CAST(`d0`.`code_0` AS INT) AS `q0_0`, CAST(`d0`.`code_1` AS SMALLINT) AS `q0_1`, CAST(`d0`.`code_2` AS SMALLINT) AS `q0_2`, CAST(`d0`.`code_3` AS TINYINT) AS `q0_3`, CAST(`d0`.`code_4` AS TINYINT) AS `q0_4`, CAST(`d0`.`code_5` AS TINYINT) AS `q0_5`, CAST(`d1`.`code_0` AS TINYINT) AS `q1_0`, CAST(`d1`.`code_1` AS TINYINT) AS `q1_1`, CAST(`d1`.`code_2` AS TINYINT) AS `q1_2`, CAST(`d1`.`code_3` AS TINYINT) AS `q1_3`, CAST(`d2`.`code_0` AS TINYINT) AS `q2_0`, CAST(`d2`.`code_1` AS TINYINT) AS `q2_1`, count(*) AS `n` 
FROM `raw`.`Patients` AS `r` JOIN `veil_dim_0` AS `d0` ON `r`.`Zip Code` = `d0`.`level_0` JOIN `veil_dim_1` AS `d1` ON `r`.`age` = `d1`.`level_0` JOIN `veil_dim_2` AS `d2` ON `r`.`x"; DROP TABLE t; --` = `d2`.`level_0` 
WHERE `r`.`condition` IS NOT NULL GROUP BY `d0`.`code_0`, `d0`.`code_1`, `d0`.`code_2`, `d0`.`code_3`, `d0`.`code_4`, `d0`.`code_5`, `d1`.`code_0`, `d1`.`code_1`, `d1`.`code_2`, `d1`.`code_3`, `d2`.`code_0`, `d2`.`code_1`;

-- dimension_ddl
CREATE OR REPLACE TEMPORARY VIEW `veil_dim_0` AS SELECT CAST(NULL AS STRING) AS `level_0`, CAST(NULL AS STRING) AS `level_1`, CAST(NULL AS STRING) AS `level_2`, CAST(NULL AS STRING) AS `level_3`, CAST(NULL AS STRING) AS `level_4`, CAST(NULL AS STRING) AS `level_5`, CAST(NULL AS INT) AS `code_0`, CAST(NULL AS INT) AS `code_1`, CAST(NULL AS INT) AS `code_2`, CAST(NULL AS INT) AS `code_3`, CAST(NULL AS INT) AS `code_4`, CAST(NULL AS INT) AS `code_5` WHERE :veil_run IS NULL;

-- node_bottom
SELECT `b`.`q0_0` AS `g0`, `b`.`q1_0` AS `g1`, `b`.`q2_0` AS `g2`, `b`.`s0`, `b`.`s1`, sum(`b`.`n`) AS `n` 
FROM `veil_base` AS `b` GROUP BY `b`.`q0_0`, `b`.`q1_0`, `b`.`q2_0`, `b`.`s0`, `b`.`s1`;

-- leaf_totals
SELECT `t`.`qi`, `t`.`code`, `t`.`n` 
FROM (SELECT :param_1 AS `qi`, `veil_base`.`q0_0` AS `code`, sum(`veil_base`.`n`) AS `n` 
FROM `veil_base` GROUP BY `veil_base`.`q0_0` UNION ALL SELECT :param_2 AS `qi`, `veil_base`.`q1_0` AS `code`, sum(`veil_base`.`n`) AS `n` 
FROM `veil_base` GROUP BY `veil_base`.`q1_0` UNION ALL SELECT :param_3 AS `qi`, `veil_base`.`q2_0` AS `code`, sum(`veil_base`.`n`) AS `n` 
FROM `veil_base` GROUP BY `veil_base`.`q2_0`) AS `t`;

-- node_figure_2
SELECT `b`.`q0_2` AS `g0`, `b`.`q1_1` AS `g1`, `b`.`q2_1` AS `g2`, `b`.`s0`, `b`.`s1`, sum(`b`.`n`) AS `n` 
FROM `veil_base` AS `b` GROUP BY `b`.`q0_2`, `b`.`q1_1`, `b`.`q2_1`, `b`.`s0`, `b`.`s1`;

-- node_top_sizes_only
SELECT `b`.`q0_5` AS `g0`, `b`.`q1_3` AS `g1`, `b`.`q2_1` AS `g2`, sum(`b`.`n`) AS `n` 
FROM `veil_base` AS `b` GROUP BY `b`.`q0_5`, `b`.`q1_3`, `b`.`q2_1`;

-- node_subset
SELECT `b`.`q0_1` AS `g0`, `b`.`q2_0` AS `g2`, `b`.`s0`, `b`.`s1`, sum(`b`.`n`) AS `n` 
FROM `veil_base` AS `b` GROUP BY `b`.`q0_1`, `b`.`q2_0`, `b`.`s0`, `b`.`s1`;

-- node_from_materialized
SELECT `u0`.`u3` AS `g0`, `b`.`q2_1` AS `g2`, `b`.`s0`, `b`.`s1`, sum(`b`.`n`) AS `n` 
FROM `veil_node_4` AS `b` JOIN `veil_up_0_1` AS `u0` ON `u0`.`c` = `b`.`q0_1` GROUP BY `u0`.`u3`, `b`.`q2_1`, `b`.`s0`, `b`.`s1`;

-- node_block_tests
SELECT `e`.`size`, CASE WHEN (`e`.`m` >= :m_1) THEN :param_1 ELSE :param_2 END AS `ok0`, CASE WHEN (`e`.`top` = `e`.`low` AND `e`.`m` >= :m_2) THEN :param_3 WHEN (`e`.`top` = `e`.`low`) THEN :param_4 WHEN (ln(CAST(`e`.`size` AS DOUBLE)) - `e`.`clogc` / CAST(CAST(`e`.`size` AS DOUBLE) AS DOUBLE) > :param_5 + :param_6 * (CAST(`e`.`m` AS DOUBLE) + :param_7) * (:ln_1 + ln(CAST(`e`.`size` AS DOUBLE)))) THEN :param_8 WHEN (ln(CAST(`e`.`size` AS DOUBLE)) - `e`.`clogc` / CAST(CAST(`e`.`size` AS DOUBLE) AS DOUBLE) < :param_9 - :param_6 * (CAST(`e`.`m` AS DOUBLE) + :param_7) * (:ln_1 + ln(CAST(`e`.`size` AS DOUBLE)))) THEN :param_10 ELSE :param_11 END AS `ok1`, count(*) AS `blocks`, min(CAST(`e`.`m` AS DOUBLE)) AS `level0`, min(CASE WHEN (`e`.`top` = `e`.`low`) THEN CAST(`e`.`m` AS DOUBLE) ELSE exp(ln(CAST(`e`.`size` AS DOUBLE)) - `e`.`clogc` / CAST(CAST(`e`.`size` AS DOUBLE) AS DOUBLE)) END) AS `level1` 
FROM (SELECT sum(`c`.`c`) AS `size`, count(*) AS `m`, max(`c`.`c`) AS `top`, min(`c`.`c`) AS `low`, sum(CAST(`c`.`c` AS DOUBLE) * ln(CAST(`c`.`c` AS DOUBLE))) AS `clogc` 
FROM (SELECT `b`.`q0_2` AS `g0`, `b`.`q1_1` AS `g1`, `b`.`q2_1` AS `g2`, sum(`b`.`n`) AS `c` 
FROM `veil_base` AS `b` GROUP BY `b`.`q0_2`, `b`.`q1_1`, `b`.`q2_1`, `b`.`s1`) AS `c` GROUP BY `c`.`g0`, `c`.`g1`, `c`.`g2`) AS `e` GROUP BY `e`.`size`, CASE WHEN (`e`.`m` >= :m_1) THEN :param_1 ELSE :param_2 END, CASE WHEN (`e`.`top` = `e`.`low` AND `e`.`m` >= :m_2) THEN :param_3 WHEN (`e`.`top` = `e`.`low`) THEN :param_4 WHEN (ln(CAST(`e`.`size` AS DOUBLE)) - `e`.`clogc` / CAST(CAST(`e`.`size` AS DOUBLE) AS DOUBLE) > :param_5 + :param_6 * (CAST(`e`.`m` AS DOUBLE) + :param_7) * (:ln_1 + ln(CAST(`e`.`size` AS DOUBLE)))) THEN :param_8 WHEN (ln(CAST(`e`.`size` AS DOUBLE)) - `e`.`clogc` / CAST(CAST(`e`.`size` AS DOUBLE) AS DOUBLE) < :param_9 - :param_6 * (CAST(`e`.`m` AS DOUBLE) + :param_7) * (:ln_1 + ln(CAST(`e`.`size` AS DOUBLE)))) THEN :param_10 ELSE :param_11 END;

-- node_block_tests_from_materialized
SELECT `e`.`size`, CASE WHEN (`e`.`top` = `e`.`low` AND `e`.`m` >= :m_1) THEN :param_1 WHEN (`e`.`top` = `e`.`low`) THEN :param_2 WHEN (ln(CAST(`e`.`size` AS DOUBLE)) - `e`.`clogc` / CAST(CAST(`e`.`size` AS DOUBLE) AS DOUBLE) > :param_3 + :param_4 * (CAST(`e`.`m` AS DOUBLE) + :param_5) * (:ln_1 + ln(CAST(`e`.`size` AS DOUBLE)))) THEN :param_6 WHEN (ln(CAST(`e`.`size` AS DOUBLE)) - `e`.`clogc` / CAST(CAST(`e`.`size` AS DOUBLE) AS DOUBLE) < :param_7 - :param_4 * (CAST(`e`.`m` AS DOUBLE) + :param_5) * (:ln_1 + ln(CAST(`e`.`size` AS DOUBLE)))) THEN :param_8 ELSE :param_9 END AS `ok0`, count(*) AS `blocks`, min(CASE WHEN (`e`.`top` = `e`.`low`) THEN CAST(`e`.`m` AS DOUBLE) ELSE exp(ln(CAST(`e`.`size` AS DOUBLE)) - `e`.`clogc` / CAST(CAST(`e`.`size` AS DOUBLE) AS DOUBLE)) END) AS `level0` 
FROM (SELECT sum(`c`.`c`) AS `size`, count(*) AS `m`, max(`c`.`c`) AS `top`, min(`c`.`c`) AS `low`, sum(CAST(`c`.`c` AS DOUBLE) * ln(CAST(`c`.`c` AS DOUBLE))) AS `clogc` 
FROM (SELECT `u0`.`u3` AS `g0`, `b`.`q2_1` AS `g2`, sum(`b`.`n`) AS `c` 
FROM `veil_node_4` AS `b` JOIN `veil_up_0_1` AS `u0` ON `u0`.`c` = `b`.`q0_1` GROUP BY `u0`.`u3`, `b`.`q2_1`, `b`.`s0`) AS `c` GROUP BY `c`.`g0`, `c`.`g2`) AS `e` GROUP BY `e`.`size`, CASE WHEN (`e`.`top` = `e`.`low` AND `e`.`m` >= :m_1) THEN :param_1 WHEN (`e`.`top` = `e`.`low`) THEN :param_2 WHEN (ln(CAST(`e`.`size` AS DOUBLE)) - `e`.`clogc` / CAST(CAST(`e`.`size` AS DOUBLE) AS DOUBLE) > :param_3 + :param_4 * (CAST(`e`.`m` AS DOUBLE) + :param_5) * (:ln_1 + ln(CAST(`e`.`size` AS DOUBLE)))) THEN :param_6 WHEN (ln(CAST(`e`.`size` AS DOUBLE)) - `e`.`clogc` / CAST(CAST(`e`.`size` AS DOUBLE) AS DOUBLE) < :param_7 - :param_4 * (CAST(`e`.`m` AS DOUBLE) + :param_5) * (:ln_1 + ln(CAST(`e`.`size` AS DOUBLE)))) THEN :param_8 ELSE :param_9 END;

-- materialize_from_base
CACHE TABLE `veil_node_4` AS SELECT `b`.`q0_1` AS `q0_1`, `b`.`q2_1` AS `q2_1`, `b`.`s0`, `b`.`s1`, CAST(sum(`b`.`n`) AS BIGINT) AS `n` 
FROM `veil_base` AS `b` GROUP BY `b`.`q0_1`, `b`.`q2_1`, `b`.`s0`, `b`.`s1`;

-- materialize_from_materialized
CACHE TABLE `veil_node_5` AS SELECT `u0`.`u2` AS `q0_2`, `b`.`q2_1` AS `q2_1`, `b`.`s0`, `b`.`s1`, CAST(sum(`b`.`n`) AS BIGINT) AS `n` 
FROM `veil_node_4` AS `b` JOIN `veil_up_0_1` AS `u0` ON `u0`.`c` = `b`.`q0_1` GROUP BY `u0`.`u2`, `b`.`q2_1`, `b`.`s0`, `b`.`s1`;

-- up_table
CACHE TABLE `veil_up_0_1` AS SELECT DISTINCT `d`.`code_1` AS `c`, `d`.`code_2` AS `u2`, `d`.`code_3` AS `u3`, `d`.`code_4` AS `u4`, `d`.`code_5` AS `u5` 
FROM `veil_dim_0` AS `d`;

-- node_read_from_its_own_table
SELECT `b`.`q0_1` AS `g0`, `b`.`q2_1` AS `g2`, `b`.`s0`, `b`.`s1`, `b`.`n` 
FROM `veil_node_4` AS `b`;

-- node_sizes_from_its_own_table
SELECT `e`.`size`, count(*) AS `blocks` 
FROM (SELECT `b`.`n` AS `size` 
FROM `veil_node_4` AS `b`) AS `e` GROUP BY `e`.`size` ORDER BY `e`.`size`;

-- node_sizes_from_the_cells
SELECT `e`.`size`, count(*) AS `blocks` 
FROM (SELECT sum(`b`.`n`) AS `size` 
FROM `veil_base` AS `b` GROUP BY `b`.`q0_2`, `b`.`q1_1`, `b`.`q2_1`) AS `e` GROUP BY `e`.`size` ORDER BY `e`.`size`;

-- hub_of_the_blocks
CACHE TABLE `veil_node_6` AS SELECT `b`.`q0_1` AS `q0_1`, `b`.`q1_0` AS `q1_0`, `b`.`q2_1` AS `q2_1`, CAST(sum(`b`.`n`) AS BIGINT) AS `n` 
FROM `veil_base` AS `b` GROUP BY `b`.`q0_1`, `b`.`q1_0`, `b`.`q2_1`;

-- grouped_sizes_from_the_base
SELECT `e`.`gid`, `e`.`size`, count(*) AS `blocks` 
FROM (SELECT grouping(`b`.`q0_1`) * :param_1 + grouping(`b`.`q0_2`) * :param_2 + grouping(`b`.`q1_0`) * :param_3 + grouping(`b`.`q1_1`) * :param_4 + grouping(`b`.`q2_0`) * :param_5 + grouping(`b`.`q2_1`) * :param_6 AS `gid`, sum(`b`.`n`) AS `size` 
FROM `veil_base` AS `b` GROUP BY GROUPING SETS((`b`.`q0_1`, `b`.`q1_0`, `b`.`q2_1`), (`b`.`q0_2`, `b`.`q1_1`, `b`.`q2_1`), (`b`.`q0_1`, `b`.`q2_0`))) AS `e` GROUP BY `e`.`gid`, `e`.`size`;

-- grouped_sizes_from_materialized
SELECT `e`.`gid`, `e`.`size`, count(*) AS `blocks` 
FROM (SELECT grouping(`b`.`q0_1`) * :param_1 + grouping(`u0`.`u2`) * :param_2 + grouping(`u0`.`u3`) * :param_3 + grouping(`b`.`q1_0`) * :param_4 + grouping(`u1`.`u1`) * :param_5 + grouping(`b`.`q2_1`) * :param_6 AS `gid`, sum(`b`.`n`) AS `size` 
FROM `veil_node_4` AS `b` JOIN `veil_up_0_1` AS `u0` ON `u0`.`c` = `b`.`q0_1` JOIN `veil_up_1_0` AS `u1` ON `u1`.`c` = `b`.`q1_0` GROUP BY GROUPING SETS((`u0`.`u2`, `u1`.`u1`, `b`.`q2_1`), (`u0`.`u3`, `b`.`q2_1`), (`b`.`q0_1`, `b`.`q1_0`, `b`.`q2_1`))) AS `e` GROUP BY `e`.`gid`, `e`.`size`;

-- no_progress_bar
SET enable_progress_bar = false;

-- cells_with_nulls
CACHE TABLE `veil_cells` AS SELECT `d0`.`code_1` AS `g0`, `d1`.`code_0` AS `g1`, `d2`.`code_1` AS `g2`, `r`.`vid` AS `vid`, count(*) AS `n` 
FROM `raw`.`Patients` AS `src` JOIN `veil_dim_0` AS `d0` ON `src`.`Zip Code` = `d0`.`level_0` JOIN `veil_dim_1` AS `d1` ON `src`.`age` = `d1`.`level_0` JOIN `veil_dim_2` AS `d2` ON `src`.`x"; DROP TABLE t; --` = `d2`.`level_0` JOIN `veil_cell_values` AS `r` ON `src`.`condition` = `r`.`v0` AND (`src`.`income` <=> `r`.`v1`) GROUP BY `d0`.`code_1`, `d1`.`code_0`, `d2`.`code_1`, `r`.`vid`;

-- base_total
SELECT coalesce(sum(`veil_base`.`n`), :coalesce_2) AS `coalesce_1`, count(*) AS `count_1` 
FROM `veil_base`;

-- stream_ordered
SELECT `o`.`g0`, `o`.`g1`, `o`.`g2`, `o`.`s0`, `o`.`s1`, `o`.`n` 
FROM (SELECT `b`.`q0_2` AS `g0`, `b`.`q1_1` AS `g1`, `b`.`q2_1` AS `g2`, `b`.`s0` AS `s0`, `b`.`s1` AS `s1`, sum(`b`.`n`) AS `n` 
FROM `veil_base` AS `b` GROUP BY `b`.`q0_2`, `b`.`q1_1`, `b`.`q2_1`, `b`.`s0`, `b`.`s1`) AS `o` ORDER BY `o`.`g0`, `o`.`g1`, `o`.`g2`;

-- census_table
CREATE TABLE `raw`.`census` (
	`person_id` BIGINT, 
	`age` INT, 
	`sex` STRING, 
	`race` STRING, 
	`marital_status` STRING, 
	`education` STRING, 
	`zip` STRING, 
	`occupation` STRING, 
	`income` INT
);

-- delete_from_working_view_keeps
SELECT * 
FROM `veil_cells` 
WHERE NOT coalesce(`veil_cells`.`q0` IS NULL OR `veil_cells`.`x0` = :x0_1, false);

-- cache_working_view
CACHE TABLE `veil_base`;

-- sensitive_domain_ddl
CREATE OR REPLACE TEMPORARY VIEW `veil_sdom_0` AS SELECT CAST(NULL AS DECIMAL(10, 2)) AS `value`, CAST(NULL AS INT) AS `code` WHERE :veil_run IS NULL;
