-- create_releases_log
CREATE TABLE IF NOT EXISTS `veil`.`releases_log` (
	`id` STRING, 
	`name` STRING, 
	`version` INT, 
	`status` STRING, 
	`started_at` TIMESTAMP, 
	`finished_at` TIMESTAMP, 
	`published_at` TIMESTAMP, 
	`config` STRING, 
	`config_hash` STRING, 
	`source_fingerprint` STRING, 
	`node` STRING, 
	`achieved` STRING, 
	`metrics` STRING, 
	`rows_read` BIGINT, 
	`rows_published` BIGINT, 
	`rows_suppressed` BIGINT, 
	`output_table` STRING, 
	`error` STRING, 
	`backend` STRING, 
	`rows_dropped_null` BIGINT, 
	`rows_deferred` BIGINT, 
	`series` STRING, 
	`expired_at` TIMESTAMP, 
	`veil_seq` BIGINT, 
	`veil_day` INT
) PARTITIONED BY (`veil_day`);

-- view_releases
CREATE OR REPLACE VIEW `veil`.`releases` TBLPROPERTIES ('veil.compacted'='', 'veil.dropped'='19997') AS SELECT `ranked`.`id`, `ranked`.`name`, `ranked`.`version`, `ranked`.`status`, `ranked`.`started_at`, `ranked`.`finished_at`, `ranked`.`published_at`, `ranked`.`config`, `ranked`.`config_hash`, `ranked`.`source_fingerprint`, `ranked`.`node`, `ranked`.`achieved`, `ranked`.`metrics`, `ranked`.`rows_read`, `ranked`.`rows_published`, `ranked`.`rows_suppressed`, `ranked`.`output_table`, `ranked`.`error`, `ranked`.`backend`, `ranked`.`rows_dropped_null`, `ranked`.`rows_deferred`, `ranked`.`series`, `ranked`.`expired_at` 
FROM (SELECT `entries`.`id` AS `id`, `entries`.`name` AS `name`, `entries`.`version` AS `version`, `entries`.`status` AS `status`, `entries`.`started_at` AS `started_at`, `entries`.`finished_at` AS `finished_at`, `entries`.`published_at` AS `published_at`, `entries`.`config` AS `config`, `entries`.`config_hash` AS `config_hash`, `entries`.`source_fingerprint` AS `source_fingerprint`, `entries`.`node` AS `node`, `entries`.`achieved` AS `achieved`, `entries`.`metrics` AS `metrics`, `entries`.`rows_read` AS `rows_read`, `entries`.`rows_published` AS `rows_published`, `entries`.`rows_suppressed` AS `rows_suppressed`, `entries`.`output_table` AS `output_table`, `entries`.`error` AS `error`, `entries`.`backend` AS `backend`, `entries`.`rows_dropped_null` AS `rows_dropped_null`, `entries`.`rows_deferred` AS `rows_deferred`, `entries`.`series` AS `series`, `entries`.`expired_at` AS `expired_at`, `entries`.`veil_seq` AS `veil_seq`, `entries`.`veil_day` AS `veil_day`, row_number() OVER (PARTITION BY `entries`.`id` ORDER BY `entries`.`veil_seq` DESC) AS `veil_rn` 
FROM (SELECT `id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day` 
FROM `veil`.`releases_log`) AS `entries`) AS `ranked` 
WHERE `ranked`.`veil_rn` = 1;

-- create_release_nodes_log
CREATE TABLE IF NOT EXISTS `veil`.`release_nodes_log` (
	`release_id` STRING, 
	`node` STRING, 
	`passed` BOOLEAN, 
	`suppressed_rows` BIGINT, 
	`metric` DOUBLE, 
	`veil_seq` BIGINT, 
	`veil_day` INT
) PARTITIONED BY (`veil_day`);

-- view_release_nodes
CREATE OR REPLACE VIEW `veil`.`release_nodes` TBLPROPERTIES ('veil.compacted'='', 'veil.dropped'='19997') AS SELECT `entries`.`release_id`, `entries`.`node`, `entries`.`passed`, `entries`.`suppressed_rows`, `entries`.`metric` 
FROM (SELECT `release_id`, `node`, `passed`, `suppressed_rows`, `metric`, `veil_seq`, `veil_day` 
FROM `veil`.`release_nodes_log`) AS `entries`;

-- create_alembic_version
CREATE TABLE IF NOT EXISTS `veil`.`alembic_version` (
	`version_num` STRING
);

-- revision
SELECT `veil`.`alembic_version`.`version_num` 
FROM `veil`.`alembic_version`;

-- record_revision
INSERT INTO `veil`.`alembic_version` (`version_num`) VALUES (:version_num);

-- start_run
INSERT INTO `veil`.`releases_log` (`id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day`) SELECT CAST(:param_1 AS STRING) AS `id`, CAST(:param_2 AS STRING) AS `name`, CAST(NULL AS INT) AS `version`, CAST(:param_3 AS STRING) AS `status`, CAST(:param_4 AS TIMESTAMP) AS `started_at`, CAST(NULL AS TIMESTAMP) AS `finished_at`, CAST(NULL AS TIMESTAMP) AS `published_at`, CAST(:param_5 AS STRING) AS `config`, CAST(:param_6 AS STRING) AS `config_hash`, CAST(NULL AS STRING) AS `source_fingerprint`, CAST(NULL AS STRING) AS `node`, CAST(NULL AS STRING) AS `achieved`, CAST(NULL AS STRING) AS `metrics`, CAST(NULL AS BIGINT) AS `rows_read`, CAST(NULL AS BIGINT) AS `rows_published`, CAST(NULL AS BIGINT) AS `rows_suppressed`, CAST(NULL AS STRING) AS `output_table`, CAST(NULL AS STRING) AS `error`, CAST(:param_7 AS STRING) AS `backend`, CAST(NULL AS BIGINT) AS `rows_dropped_null`, CAST(NULL AS BIGINT) AS `rows_deferred`, CAST(NULL AS STRING) AS `series`, CAST(NULL AS TIMESTAMP) AS `expired_at`, :param_8 AS `veil_seq`, :param_9 AS `veil_day`;

-- close_interrupted
INSERT INTO `veil`.`releases_log` (`id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day`) SELECT `veil`.`releases`.`id`, `veil`.`releases`.`name`, `veil`.`releases`.`version`, CAST(:param_1 AS STRING) AS `status`, `veil`.`releases`.`started_at`, CAST(:param_2 AS TIMESTAMP) AS `finished_at`, `veil`.`releases`.`published_at`, `veil`.`releases`.`config`, `veil`.`releases`.`config_hash`, `veil`.`releases`.`source_fingerprint`, `veil`.`releases`.`node`, `veil`.`releases`.`achieved`, `veil`.`releases`.`metrics`, `veil`.`releases`.`rows_read`, `veil`.`releases`.`rows_published`, `veil`.`releases`.`rows_suppressed`, `veil`.`releases`.`output_table`, CAST(:param_3 AS STRING) AS `error`, `veil`.`releases`.`backend`, `veil`.`releases`.`rows_dropped_null`, `veil`.`releases`.`rows_deferred`, `veil`.`releases`.`series`, `veil`.`releases`.`expired_at`, :param_4 AS `veil_seq`, :param_5 AS `veil_day` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`name` = :name_1 AND `veil`.`releases`.`status` = :status_1;

-- runs_of
SELECT `veil`.`releases`.`version`, `veil`.`releases`.`status`, `veil`.`releases`.`config_hash`, `veil`.`releases`.`source_fingerprint`, `veil`.`releases`.`id` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`name` = :name_1;

-- skip_run
INSERT INTO `veil`.`releases_log` (`id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day`) SELECT `veil`.`releases`.`id`, `veil`.`releases`.`name`, `veil`.`releases`.`version`, CAST(:param_1 AS STRING) AS `status`, `veil`.`releases`.`started_at`, CAST(:param_2 AS TIMESTAMP) AS `finished_at`, `veil`.`releases`.`published_at`, `veil`.`releases`.`config`, `veil`.`releases`.`config_hash`, CAST(:param_3 AS STRING) AS `source_fingerprint`, `veil`.`releases`.`node`, `veil`.`releases`.`achieved`, `veil`.`releases`.`metrics`, `veil`.`releases`.`rows_read`, `veil`.`releases`.`rows_published`, `veil`.`releases`.`rows_suppressed`, `veil`.`releases`.`output_table`, CAST(:param_4 AS STRING) AS `error`, `veil`.`releases`.`backend`, `veil`.`releases`.`rows_dropped_null`, `veil`.`releases`.`rows_deferred`, `veil`.`releases`.`series`, `veil`.`releases`.`expired_at`, :param_5 AS `veil_seq`, :param_6 AS `veil_day` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`id` = :id_1;

-- stored_hierarchies
SELECT DISTINCT `veil`.`hierarchies`.`digest` 
FROM `veil`.`hierarchies` 
WHERE `veil`.`hierarchies`.`digest` IN (:digest_1_1, :digest_1_2) AND `veil`.`hierarchies`.`definition` IS NOT NULL;

-- published_versions
SELECT `veil`.`releases`.`version` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`name` = :name_1 AND `veil`.`releases`.`status` = :status_1 ORDER BY `veil`.`releases`.`version` DESC;

-- latest_published_version
SELECT `veil`.`releases`.`version` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`name` = :name_1 AND `veil`.`releases`.`status` = :status_1 ORDER BY `veil`.`releases`.`version` DESC
 LIMIT :param_1;

-- expire_versions
INSERT INTO `veil`.`releases_log` (`id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day`) SELECT `veil`.`releases`.`id`, `veil`.`releases`.`name`, `veil`.`releases`.`version`, CAST(:param_1 AS STRING) AS `status`, `veil`.`releases`.`started_at`, `veil`.`releases`.`finished_at`, `veil`.`releases`.`published_at`, `veil`.`releases`.`config`, `veil`.`releases`.`config_hash`, `veil`.`releases`.`source_fingerprint`, `veil`.`releases`.`node`, `veil`.`releases`.`achieved`, `veil`.`releases`.`metrics`, `veil`.`releases`.`rows_read`, `veil`.`releases`.`rows_published`, `veil`.`releases`.`rows_suppressed`, `veil`.`releases`.`output_table`, `veil`.`releases`.`error`, `veil`.`releases`.`backend`, `veil`.`releases`.`rows_dropped_null`, `veil`.`releases`.`rows_deferred`, `veil`.`releases`.`series`, CAST(:param_2 AS TIMESTAMP) AS `expired_at`, :param_3 AS `veil_seq`, :param_4 AS `veil_day` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`name` = :name_1 AND `veil`.`releases`.`version` IN (:version_1_1, :version_1_2) AND `veil`.`releases`.`status` = :status_1;

-- publish_run
INSERT INTO `veil`.`releases_log` (`id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day`) SELECT `veil`.`releases`.`id`, `veil`.`releases`.`name`, CAST(:param_1 AS INT) AS `version`, CAST(:param_2 AS STRING) AS `status`, `veil`.`releases`.`started_at`, CAST(:param_3 AS TIMESTAMP) AS `finished_at`, CAST(:param_4 AS TIMESTAMP) AS `published_at`, `veil`.`releases`.`config`, CAST(:param_5 AS STRING) AS `config_hash`, CAST(:param_6 AS STRING) AS `source_fingerprint`, CAST(:param_7 AS STRING) AS `node`, CAST(:param_8 AS STRING) AS `achieved`, CAST(:param_9 AS STRING) AS `metrics`, CAST(:param_10 AS BIGINT) AS `rows_read`, CAST(:param_11 AS BIGINT) AS `rows_published`, CAST(:param_12 AS BIGINT) AS `rows_suppressed`, CAST(:param_13 AS STRING) AS `output_table`, `veil`.`releases`.`error`, `veil`.`releases`.`backend`, CAST(:param_14 AS BIGINT) AS `rows_dropped_null`, CAST(:param_15 AS BIGINT) AS `rows_deferred`, CAST(:param_16 AS STRING) AS `series`, `veil`.`releases`.`expired_at`, :param_17 AS `veil_seq`, :param_18 AS `veil_day` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`id` = :id_1;

-- expired_versions
SELECT `veil`.`releases`.`version` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`name` = :name_1 AND `veil`.`releases`.`status` = :status_1;

-- set_series
INSERT INTO `veil`.`releases_log` (`id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day`) SELECT `veil`.`releases`.`id`, `veil`.`releases`.`name`, `veil`.`releases`.`version`, `veil`.`releases`.`status`, `veil`.`releases`.`started_at`, `veil`.`releases`.`finished_at`, `veil`.`releases`.`published_at`, `veil`.`releases`.`config`, `veil`.`releases`.`config_hash`, `veil`.`releases`.`source_fingerprint`, `veil`.`releases`.`node`, `veil`.`releases`.`achieved`, `veil`.`releases`.`metrics`, `veil`.`releases`.`rows_read`, `veil`.`releases`.`rows_published`, `veil`.`releases`.`rows_suppressed`, `veil`.`releases`.`output_table`, `veil`.`releases`.`error`, `veil`.`releases`.`backend`, `veil`.`releases`.`rows_dropped_null`, `veil`.`releases`.`rows_deferred`, CAST(:param_1 AS STRING) AS `series`, `veil`.`releases`.`expired_at`, :param_2 AS `veil_seq`, :param_3 AS `veil_day` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`id` = :id_1;

-- fail_run
INSERT INTO `veil`.`releases_log` (`id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day`) SELECT `veil`.`releases`.`id`, `veil`.`releases`.`name`, `veil`.`releases`.`version`, CAST(:param_1 AS STRING) AS `status`, `veil`.`releases`.`started_at`, CAST(:param_2 AS TIMESTAMP) AS `finished_at`, `veil`.`releases`.`published_at`, `veil`.`releases`.`config`, `veil`.`releases`.`config_hash`, `veil`.`releases`.`source_fingerprint`, `veil`.`releases`.`node`, `veil`.`releases`.`achieved`, `veil`.`releases`.`metrics`, `veil`.`releases`.`rows_read`, `veil`.`releases`.`rows_published`, `veil`.`releases`.`rows_suppressed`, `veil`.`releases`.`output_table`, CAST(:param_3 AS STRING) AS `error`, `veil`.`releases`.`backend`, `veil`.`releases`.`rows_dropped_null`, `veil`.`releases`.`rows_deferred`, `veil`.`releases`.`series`, `veil`.`releases`.`expired_at`, :param_4 AS `veil_seq`, :param_5 AS `veil_day` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`id` = :id_1 AND `veil`.`releases`.`status` = :status_1;

-- run_status
SELECT `veil`.`releases`.`status` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`id` = :id_1;

-- run_summary
SELECT `veil`.`releases`.`status`, `veil`.`releases`.`version`, `veil`.`releases`.`node`, `veil`.`releases`.`rows_published`, `veil`.`releases`.`rows_suppressed`, `veil`.`releases`.`rows_deferred`, `veil`.`releases`.`achieved`, `veil`.`releases`.`series`, `veil`.`releases`.`output_table`, `veil`.`releases`.`error` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`id` = :id_1;

-- record_ledger_version
INSERT INTO `veil`.`series_versions_log` (`name`, `version`, `release_id`, `node`, `attributes`, `columns`, `hierarchies`, `policy`, `published_at`, `veil_seq`, `veil_day`) SELECT CAST(:param_1 AS STRING) AS `name`, CAST(:param_2 AS INT) AS `version`, CAST(:param_3 AS STRING) AS `release_id`, CAST(:param_4 AS STRING) AS `node`, CAST(:param_5 AS STRING) AS `attributes`, CAST(:param_6 AS STRING) AS `columns`, CAST(:param_7 AS STRING) AS `hierarchies`, CAST(:param_8 AS STRING) AS `policy`, CAST(:param_9 AS TIMESTAMP) AS `published_at`, :param_10 AS `veil_seq`, :param_11 AS `veil_day`;

-- history
SELECT `veil`.`releases`.`version`, `veil`.`releases`.`status`, `veil`.`releases`.`node`, `veil`.`releases`.`rows_published`, `veil`.`releases`.`rows_suppressed`, `veil`.`releases`.`rows_deferred`, `veil`.`releases`.`achieved`, `veil`.`releases`.`started_at`, `veil`.`releases`.`published_at`, `veil`.`releases`.`error`, `veil`.`releases`.`series` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`name` = :name_1 ORDER BY `veil`.`releases`.`started_at`;

-- kept_versions
SELECT `veil`.`releases`.`version`, `veil`.`releases`.`status` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`name` = :name_1 AND `veil`.`releases`.`status` IN (:status_1_1, :status_1_2);

-- rows_published
SELECT `veil`.`releases`.`rows_published` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`name` = :name_1 AND `veil`.`releases`.`version` = :version_1 AND `veil`.`releases`.`status` = :status_1;

-- record_rollback
INSERT INTO `veil`.`releases_log` (`id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day`) SELECT CAST(:param_1 AS STRING) AS `id`, CAST(:param_2 AS STRING) AS `name`, CAST(:param_3 AS INT) AS `version`, CAST(:param_4 AS STRING) AS `status`, CAST(:param_5 AS TIMESTAMP) AS `started_at`, CAST(:param_6 AS TIMESTAMP) AS `finished_at`, CAST(NULL AS TIMESTAMP) AS `published_at`, CAST(:param_7 AS STRING) AS `config`, CAST(:param_8 AS STRING) AS `config_hash`, CAST(NULL AS STRING) AS `source_fingerprint`, CAST(NULL AS STRING) AS `node`, CAST(NULL AS STRING) AS `achieved`, CAST(NULL AS STRING) AS `metrics`, CAST(NULL AS BIGINT) AS `rows_read`, CAST(NULL AS BIGINT) AS `rows_published`, CAST(NULL AS BIGINT) AS `rows_suppressed`, CAST(NULL AS STRING) AS `output_table`, CAST(:param_9 AS STRING) AS `error`, CAST(:param_10 AS STRING) AS `backend`, CAST(NULL AS BIGINT) AS `rows_dropped_null`, CAST(NULL AS BIGINT) AS `rows_deferred`, CAST(NULL AS STRING) AS `series`, CAST(NULL AS TIMESTAMP) AS `expired_at`, :param_11 AS `veil_seq`, :param_12 AS `veil_day`;

-- series_records
SELECT `veil`.`releases`.`version`, `veil`.`releases`.`node`, `veil`.`releases`.`series`, `veil`.`releases`.`rows_published` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`name` = :name_1 AND `veil`.`releases`.`status` IN (:status_1_1, :status_1_2) ORDER BY `veil`.`releases`.`version`;

-- ledger_columns
SELECT `veil`.`series_versions`.`columns` 
FROM `veil`.`series_versions` 
WHERE `veil`.`series_versions`.`name` = :name_1;

-- adopt_run
INSERT INTO `veil`.`releases_log` (`id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day`) SELECT `veil`.`releases`.`id`, `veil`.`releases`.`name`, CAST(:param_1 AS INT) AS `version`, CAST(:param_2 AS STRING) AS `status`, `veil`.`releases`.`started_at`, CAST(:param_3 AS TIMESTAMP) AS `finished_at`, CAST(:param_4 AS TIMESTAMP) AS `published_at`, `veil`.`releases`.`config`, `veil`.`releases`.`config_hash`, `veil`.`releases`.`source_fingerprint`, CAST(coalesce((SELECT max(`veil`.`series_versions`.`node`) AS `max_1` 
FROM `veil`.`series_versions` 
WHERE `veil`.`series_versions`.`version` = :version_1 AND `veil`.`series_versions`.`release_id` = :release_id_1), (SELECT max(`veil`.`series_state`.`node`) AS `max_2` 
FROM `veil`.`series_state` 
WHERE `veil`.`series_state`.`members` = :members_1)) AS STRING) AS `node`, `veil`.`releases`.`achieved`, `veil`.`releases`.`metrics`, `veil`.`releases`.`rows_read`, `veil`.`releases`.`rows_published`, `veil`.`releases`.`rows_suppressed`, CAST(:param_5 AS STRING) AS `output_table`, CAST(:param_6 AS STRING) AS `error`, `veil`.`releases`.`backend`, `veil`.`releases`.`rows_dropped_null`, `veil`.`releases`.`rows_deferred`, `veil`.`releases`.`series`, `veil`.`releases`.`expired_at`, :param_7 AS `veil_seq`, :param_8 AS `veil_day` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`id` = :id_1;

-- ledger_versions
SELECT `veil`.`series_versions`.`version`, `veil`.`series_versions`.`release_id` 
FROM `veil`.`series_versions` 
WHERE `veil`.`series_versions`.`name` = :name_1;

-- keep_number
INSERT INTO `veil`.`releases_log` (`id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day`) SELECT `veil`.`releases`.`id`, `veil`.`releases`.`name`, CAST(:param_1 AS INT) AS `version`, `veil`.`releases`.`status`, `veil`.`releases`.`started_at`, `veil`.`releases`.`finished_at`, `veil`.`releases`.`published_at`, `veil`.`releases`.`config`, `veil`.`releases`.`config_hash`, `veil`.`releases`.`source_fingerprint`, `veil`.`releases`.`node`, `veil`.`releases`.`achieved`, `veil`.`releases`.`metrics`, `veil`.`releases`.`rows_read`, `veil`.`releases`.`rows_published`, `veil`.`releases`.`rows_suppressed`, `veil`.`releases`.`output_table`, CAST(:param_2 AS STRING) AS `error`, `veil`.`releases`.`backend`, `veil`.`releases`.`rows_dropped_null`, `veil`.`releases`.`rows_deferred`, `veil`.`releases`.`series`, `veil`.`releases`.`expired_at`, :param_3 AS `veil_seq`, :param_4 AS `veil_day` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`id` = :id_1;

-- members_generation
CREATE TABLE `veil`.`census_members_v4` AS SELECT * 
FROM `veil`.`census_members_v3`;

-- members_arrive
INSERT INTO `veil`.`census_members` (`veil_id`, `veil_state`, `veil_joined`, `Zip Code`, `x"; DROP TABLE t; --`, `condition`) SELECT `veil_now`.`veil_id`, :param_1 AS `anon_1`, :param_2 AS `anon_2`, `veil_now`.`Zip Code`, `veil_now`.`x"; DROP TABLE t; --`, `veil_now`.`condition` 
FROM `veil_now` 
WHERE NOT (EXISTS (SELECT * 
FROM `veil`.`census_members` 
WHERE `veil`.`census_members`.`veil_id` = `veil_now`.`veil_id`));

-- members_leave_0
DROP TABLE IF EXISTS `veil`.`census_members_veil_next`;

-- members_leave_1
CREATE TABLE `veil`.`census_members_veil_next` AS SELECT `veil_hit_0`.`veil_id`, CAST(CASE WHEN `veil_hit_0`.`veil_hit` THEN :param_1 ELSE `veil_hit_0`.`veil_state` END AS SMALLINT) AS `veil_state`, `veil_hit_0`.`veil_cohort`, `veil_hit_0`.`veil_joined`, `veil_hit_0`.`veil_since`, CAST(CASE WHEN `veil_hit_0`.`veil_hit` THEN :param_2 ELSE `veil_hit_0`.`veil_gone` END AS INT) AS `veil_gone`, `veil_hit_0`.`Zip Code`, `veil_hit_0`.`x"; DROP TABLE t; --`, `veil_hit_0`.`condition` 
FROM (SELECT `veil`.`census_members`.`veil_id` AS `veil_id`, `veil`.`census_members`.`veil_state` AS `veil_state`, `veil`.`census_members`.`veil_cohort` AS `veil_cohort`, `veil`.`census_members`.`veil_joined` AS `veil_joined`, `veil`.`census_members`.`veil_since` AS `veil_since`, `veil`.`census_members`.`veil_gone` AS `veil_gone`, `veil`.`census_members`.`Zip Code` AS `Zip Code`, `veil`.`census_members`.`x"; DROP TABLE t; --` AS `x"; DROP TABLE t; --`, `veil`.`census_members`.`condition` AS `condition`, coalesce(`veil`.`census_members`.`veil_state` = :veil_state_1 AND NOT (EXISTS (SELECT * 
FROM `veil_now` 
WHERE `veil`.`census_members`.`veil_id` = `veil_now`.`veil_id`)), false) AS `veil_hit` 
FROM `veil`.`census_members`) AS `veil_hit_0`;

-- members_leave_2
DROP TABLE IF EXISTS `veil`.`census_members`;

-- members_leave_3
ALTER TABLE `veil`.`census_members_veil_next` RENAME TO `veil`.`census_members`;

-- members_leave_4
REFRESH TABLE `veil`.`census_members`;

-- members_forget_0
DROP TABLE IF EXISTS `veil`.`census_members_veil_next`;

-- members_forget_1
CREATE TABLE `veil`.`census_members_veil_next` AS SELECT * 
FROM `veil`.`census_members` 
WHERE NOT coalesce(`veil`.`census_members`.`veil_state` = :veil_state_1 AND NOT (EXISTS (SELECT * 
FROM `veil_now` 
WHERE `veil`.`census_members`.`veil_id` = `veil_now`.`veil_id`)), false);

-- members_forget_2
DROP TABLE IF EXISTS `veil`.`census_members`;

-- members_forget_3
ALTER TABLE `veil`.`census_members_veil_next` RENAME TO `veil`.`census_members`;

-- members_forget_4
REFRESH TABLE `veil`.`census_members`;

-- members_form_0
DROP TABLE IF EXISTS `veil`.`census_members_veil_next`;

-- members_form_1
CREATE TABLE `veil`.`census_members_veil_next` AS SELECT `veil_hit_0`.`veil_id`, CAST(CASE WHEN `veil_hit_0`.`veil_hit` THEN :param_1 ELSE `veil_hit_0`.`veil_state` END AS SMALLINT) AS `veil_state`, CAST(CASE WHEN `veil_hit_0`.`veil_hit` THEN (SELECT max(`veil_forming`.`veil_cohort`) AS `max_1` 
FROM `veil_forming` 
WHERE `veil_forming`.`g0` = `veil_hit_0`.`Zip Code` AND `veil_forming`.`g1` = `veil_hit_0`.`x"; DROP TABLE t; --`) ELSE `veil_hit_0`.`veil_cohort` END AS BIGINT) AS `veil_cohort`, `veil_hit_0`.`veil_joined`, CAST(CASE WHEN `veil_hit_0`.`veil_hit` THEN :param_2 ELSE `veil_hit_0`.`veil_since` END AS INT) AS `veil_since`, `veil_hit_0`.`veil_gone`, `veil_hit_0`.`Zip Code`, `veil_hit_0`.`x"; DROP TABLE t; --`, `veil_hit_0`.`condition` 
FROM (SELECT `veil`.`census_members`.`veil_id` AS `veil_id`, `veil`.`census_members`.`veil_state` AS `veil_state`, `veil`.`census_members`.`veil_cohort` AS `veil_cohort`, `veil`.`census_members`.`veil_joined` AS `veil_joined`, `veil`.`census_members`.`veil_since` AS `veil_since`, `veil`.`census_members`.`veil_gone` AS `veil_gone`, `veil`.`census_members`.`Zip Code` AS `Zip Code`, `veil`.`census_members`.`x"; DROP TABLE t; --` AS `x"; DROP TABLE t; --`, `veil`.`census_members`.`condition` AS `condition`, coalesce(`veil`.`census_members`.`veil_state` = :veil_state_1 AND (EXISTS (SELECT * 
FROM `veil_forming` 
WHERE `veil_forming`.`g0` = `veil`.`census_members`.`Zip Code` AND `veil_forming`.`g1` = `veil`.`census_members`.`x"; DROP TABLE t; --`)), false) AS `veil_hit` 
FROM `veil`.`census_members`) AS `veil_hit_0`;

-- members_form_2
DROP TABLE IF EXISTS `veil`.`census_members`;

-- members_form_3
ALTER TABLE `veil`.`census_members_veil_next` RENAME TO `veil`.`census_members`;

-- members_form_4
REFRESH TABLE `veil`.`census_members`;

-- members_depart_0
DROP TABLE IF EXISTS `veil`.`census_members_veil_next`;

-- members_depart_1
CREATE TABLE `veil`.`census_members_veil_next` AS SELECT * 
FROM `veil`.`census_members` 
WHERE NOT coalesce(`veil`.`census_members`.`veil_state` = :veil_state_1 AND `veil`.`census_members`.`veil_cohort` IN (SELECT `veil_leaving`.`veil_cohort` 
FROM `veil_leaving`), false);

-- members_depart_2
DROP TABLE IF EXISTS `veil`.`census_members`;

-- members_depart_3
ALTER TABLE `veil`.`census_members_veil_next` RENAME TO `veil`.`census_members`;

-- members_depart_4
REFRESH TABLE `veil`.`census_members`;

-- members_withdraw_0
DROP TABLE IF EXISTS `veil`.`census_members_veil_next`;

-- members_withdraw_1
CREATE TABLE `veil`.`census_members_veil_next` AS SELECT `veil_hit_0`.`veil_id`, CAST(CASE WHEN `veil_hit_0`.`veil_hit` THEN :param_1 ELSE `veil_hit_0`.`veil_state` END AS SMALLINT) AS `veil_state`, CAST(CASE WHEN `veil_hit_0`.`veil_hit` THEN :param_2 ELSE `veil_hit_0`.`veil_cohort` END AS BIGINT) AS `veil_cohort`, `veil_hit_0`.`veil_joined`, CAST(CASE WHEN `veil_hit_0`.`veil_hit` THEN :param_3 ELSE `veil_hit_0`.`veil_since` END AS INT) AS `veil_since`, `veil_hit_0`.`veil_gone`, `veil_hit_0`.`Zip Code`, `veil_hit_0`.`x"; DROP TABLE t; --`, `veil_hit_0`.`condition` 
FROM (SELECT `veil`.`census_members`.`veil_id` AS `veil_id`, `veil`.`census_members`.`veil_state` AS `veil_state`, `veil`.`census_members`.`veil_cohort` AS `veil_cohort`, `veil`.`census_members`.`veil_joined` AS `veil_joined`, `veil`.`census_members`.`veil_since` AS `veil_since`, `veil`.`census_members`.`veil_gone` AS `veil_gone`, `veil`.`census_members`.`Zip Code` AS `Zip Code`, `veil`.`census_members`.`x"; DROP TABLE t; --` AS `x"; DROP TABLE t; --`, `veil`.`census_members`.`condition` AS `condition`, coalesce(`veil`.`census_members`.`veil_state` = :veil_state_1 AND `veil`.`census_members`.`veil_cohort` IN (SELECT `veil_leaving`.`veil_cohort` 
FROM `veil_leaving`), false) AS `veil_hit` 
FROM `veil`.`census_members`) AS `veil_hit_0`;

-- members_withdraw_2
DROP TABLE IF EXISTS `veil`.`census_members`;

-- members_withdraw_3
ALTER TABLE `veil`.`census_members_veil_next` RENAME TO `veil`.`census_members`;

-- members_withdraw_4
REFRESH TABLE `veil`.`census_members`;

-- members_erase_0
DROP TABLE IF EXISTS `veil`.`census_members_veil_next`;

-- members_erase_1
CREATE TABLE `veil`.`census_members_veil_next` AS SELECT * 
FROM `veil`.`census_members` 
WHERE NOT coalesce(`veil`.`census_members`.`veil_state` = :veil_state_1, false);

-- members_erase_2
DROP TABLE IF EXISTS `veil`.`census_members`;

-- members_erase_3
ALTER TABLE `veil`.`census_members_veil_next` RENAME TO `veil`.`census_members`;

-- members_erase_4
REFRESH TABLE `veil`.`census_members`;

-- members_take_over_0
DROP TABLE IF EXISTS `veil`.`census_members_veil_next`;

-- members_take_over_1
CREATE TABLE `veil`.`census_members_veil_next` AS SELECT `veil_hit_0`.`veil_id`, CAST(CASE WHEN `veil_hit_0`.`veil_hit` THEN :param_1 ELSE `veil_hit_0`.`veil_state` END AS SMALLINT) AS `veil_state`, CAST(CASE WHEN `veil_hit_0`.`veil_hit` THEN (SELECT max(`veil_taking`.`veil_cohort`) AS `max_1` 
FROM `veil_taking` 
WHERE `veil_hit_0`.`veil_id` = `veil_taking`.`veil_waiting`) ELSE `veil_hit_0`.`veil_cohort` END AS BIGINT) AS `veil_cohort`, `veil_hit_0`.`veil_joined`, CAST(CASE WHEN `veil_hit_0`.`veil_hit` THEN :param_2 ELSE `veil_hit_0`.`veil_since` END AS INT) AS `veil_since`, `veil_hit_0`.`veil_gone`, `veil_hit_0`.`Zip Code`, `veil_hit_0`.`x"; DROP TABLE t; --`, `veil_hit_0`.`condition` 
FROM (SELECT `veil`.`census_members`.`veil_id` AS `veil_id`, `veil`.`census_members`.`veil_state` AS `veil_state`, `veil`.`census_members`.`veil_cohort` AS `veil_cohort`, `veil`.`census_members`.`veil_joined` AS `veil_joined`, `veil`.`census_members`.`veil_since` AS `veil_since`, `veil`.`census_members`.`veil_gone` AS `veil_gone`, `veil`.`census_members`.`Zip Code` AS `Zip Code`, `veil`.`census_members`.`x"; DROP TABLE t; --` AS `x"; DROP TABLE t; --`, `veil`.`census_members`.`condition` AS `condition`, coalesce(`veil`.`census_members`.`veil_state` = :veil_state_1 AND `veil`.`census_members`.`veil_id` IN (SELECT `veil_taking`.`veil_waiting` 
FROM `veil_taking`), false) AS `veil_hit` 
FROM `veil`.`census_members`) AS `veil_hit_0`;

-- members_take_over_2
DROP TABLE IF EXISTS `veil`.`census_members`;

-- members_take_over_3
ALTER TABLE `veil`.`census_members_veil_next` RENAME TO `veil`.`census_members`;

-- members_take_over_4
REFRESH TABLE `veil`.`census_members`;

-- members_taken_over_0
DROP TABLE IF EXISTS `veil`.`census_members_veil_next`;

-- members_taken_over_1
CREATE TABLE `veil`.`census_members_veil_next` AS SELECT * 
FROM `veil`.`census_members` 
WHERE NOT coalesce(`veil`.`census_members`.`veil_state` = :veil_state_1 AND `veil`.`census_members`.`veil_id` IN (SELECT `veil_taking`.`veil_standing` 
FROM `veil_taking`), false);

-- members_taken_over_2
DROP TABLE IF EXISTS `veil`.`census_members`;

-- members_taken_over_3
ALTER TABLE `veil`.`census_members_veil_next` RENAME TO `veil`.`census_members`;

-- members_taken_over_4
REFRESH TABLE `veil`.`census_members`;

-- members_forget_leave_0
DROP TABLE IF EXISTS `veil`.`census_members_veil_next`;

-- members_forget_leave_1
CREATE TABLE `veil`.`census_members_veil_next` AS SELECT `veil_hit_1`.`veil_id`, CAST(CASE WHEN `veil_hit_1`.`veil_hit` THEN :param_1 ELSE `veil_hit_1`.`veil_state` END AS SMALLINT) AS `veil_state`, `veil_hit_1`.`veil_cohort`, `veil_hit_1`.`veil_joined`, `veil_hit_1`.`veil_since`, CAST(CASE WHEN `veil_hit_1`.`veil_hit` THEN :param_2 ELSE `veil_hit_1`.`veil_gone` END AS INT) AS `veil_gone`, `veil_hit_1`.`Zip Code`, `veil_hit_1`.`x"; DROP TABLE t; --`, `veil_hit_1`.`condition` 
FROM (SELECT `veil_change_0`.`veil_id` AS `veil_id`, `veil_change_0`.`veil_state` AS `veil_state`, `veil_change_0`.`veil_cohort` AS `veil_cohort`, `veil_change_0`.`veil_joined` AS `veil_joined`, `veil_change_0`.`veil_since` AS `veil_since`, `veil_change_0`.`veil_gone` AS `veil_gone`, `veil_change_0`.`Zip Code` AS `Zip Code`, `veil_change_0`.`x"; DROP TABLE t; --` AS `x"; DROP TABLE t; --`, `veil_change_0`.`condition` AS `condition`, coalesce(`veil_change_0`.`veil_state` = :veil_state_1 AND NOT (EXISTS (SELECT * 
FROM `veil_now` 
WHERE `veil_change_0`.`veil_id` = `veil_now`.`veil_id`)), false) AS `veil_hit` 
FROM (SELECT `veil`.`census_members`.`veil_id` AS `veil_id`, `veil`.`census_members`.`veil_state` AS `veil_state`, `veil`.`census_members`.`veil_cohort` AS `veil_cohort`, `veil`.`census_members`.`veil_joined` AS `veil_joined`, `veil`.`census_members`.`veil_since` AS `veil_since`, `veil`.`census_members`.`veil_gone` AS `veil_gone`, `veil`.`census_members`.`Zip Code` AS `Zip Code`, `veil`.`census_members`.`x"; DROP TABLE t; --` AS `x"; DROP TABLE t; --`, `veil`.`census_members`.`condition` AS `condition` 
FROM `veil`.`census_members` 
WHERE NOT coalesce(`veil`.`census_members`.`veil_state` = :veil_state_2 AND NOT (EXISTS (SELECT * 
FROM `veil_now` 
WHERE `veil`.`census_members`.`veil_id` = `veil_now`.`veil_id`)), false)) AS `veil_change_0`) AS `veil_hit_1`;

-- members_forget_leave_2
DROP TABLE IF EXISTS `veil`.`census_members`;

-- members_forget_leave_3
ALTER TABLE `veil`.`census_members_veil_next` RENAME TO `veil`.`census_members`;

-- members_forget_leave_4
REFRESH TABLE `veil`.`census_members`;

-- members_taken_over_take_over_0
DROP TABLE IF EXISTS `veil`.`census_members_veil_next`;

-- members_taken_over_take_over_1
CREATE TABLE `veil`.`census_members_veil_next` AS SELECT `veil_hit_1`.`veil_id`, CAST(CASE WHEN `veil_hit_1`.`veil_hit` THEN :param_1 ELSE `veil_hit_1`.`veil_state` END AS SMALLINT) AS `veil_state`, CAST(CASE WHEN `veil_hit_1`.`veil_hit` THEN (SELECT max(`veil_taking`.`veil_cohort`) AS `max_1` 
FROM `veil_taking` 
WHERE `veil_hit_1`.`veil_id` = `veil_taking`.`veil_waiting`) ELSE `veil_hit_1`.`veil_cohort` END AS BIGINT) AS `veil_cohort`, `veil_hit_1`.`veil_joined`, CAST(CASE WHEN `veil_hit_1`.`veil_hit` THEN :param_2 ELSE `veil_hit_1`.`veil_since` END AS INT) AS `veil_since`, `veil_hit_1`.`veil_gone`, `veil_hit_1`.`Zip Code`, `veil_hit_1`.`x"; DROP TABLE t; --`, `veil_hit_1`.`condition` 
FROM (SELECT `veil_change_0`.`veil_id` AS `veil_id`, `veil_change_0`.`veil_state` AS `veil_state`, `veil_change_0`.`veil_cohort` AS `veil_cohort`, `veil_change_0`.`veil_joined` AS `veil_joined`, `veil_change_0`.`veil_since` AS `veil_since`, `veil_change_0`.`veil_gone` AS `veil_gone`, `veil_change_0`.`Zip Code` AS `Zip Code`, `veil_change_0`.`x"; DROP TABLE t; --` AS `x"; DROP TABLE t; --`, `veil_change_0`.`condition` AS `condition`, coalesce(`veil_change_0`.`veil_state` = :veil_state_1 AND `veil_change_0`.`veil_id` IN (SELECT `veil_taking`.`veil_waiting` 
FROM `veil_taking`), false) AS `veil_hit` 
FROM (SELECT `veil`.`census_members`.`veil_id` AS `veil_id`, `veil`.`census_members`.`veil_state` AS `veil_state`, `veil`.`census_members`.`veil_cohort` AS `veil_cohort`, `veil`.`census_members`.`veil_joined` AS `veil_joined`, `veil`.`census_members`.`veil_since` AS `veil_since`, `veil`.`census_members`.`veil_gone` AS `veil_gone`, `veil`.`census_members`.`Zip Code` AS `Zip Code`, `veil`.`census_members`.`x"; DROP TABLE t; --` AS `x"; DROP TABLE t; --`, `veil`.`census_members`.`condition` AS `condition` 
FROM `veil`.`census_members` 
WHERE NOT coalesce(`veil`.`census_members`.`veil_state` = :veil_state_2 AND `veil`.`census_members`.`veil_id` IN (SELECT `veil_taking`.`veil_standing` 
FROM `veil_taking`), false)) AS `veil_change_0`) AS `veil_hit_1`;

-- members_taken_over_take_over_2
DROP TABLE IF EXISTS `veil`.`census_members`;

-- members_taken_over_take_over_3
ALTER TABLE `veil`.`census_members_veil_next` RENAME TO `veil`.`census_members`;

-- members_taken_over_take_over_4
REFRESH TABLE `veil`.`census_members`;

-- members_depart_form_0
DROP TABLE IF EXISTS `veil`.`census_members_veil_next`;

-- members_depart_form_1
CREATE TABLE `veil`.`census_members_veil_next` AS SELECT `veil_hit_1`.`veil_id`, CAST(CASE WHEN `veil_hit_1`.`veil_hit` THEN :param_1 ELSE `veil_hit_1`.`veil_state` END AS SMALLINT) AS `veil_state`, CAST(CASE WHEN `veil_hit_1`.`veil_hit` THEN (SELECT max(`veil_forming`.`veil_cohort`) AS `max_1` 
FROM `veil_forming` 
WHERE `veil_forming`.`g0` = `veil_hit_1`.`Zip Code` AND `veil_forming`.`g1` = `veil_hit_1`.`x"; DROP TABLE t; --`) ELSE `veil_hit_1`.`veil_cohort` END AS BIGINT) AS `veil_cohort`, `veil_hit_1`.`veil_joined`, CAST(CASE WHEN `veil_hit_1`.`veil_hit` THEN :param_2 ELSE `veil_hit_1`.`veil_since` END AS INT) AS `veil_since`, `veil_hit_1`.`veil_gone`, `veil_hit_1`.`Zip Code`, `veil_hit_1`.`x"; DROP TABLE t; --`, `veil_hit_1`.`condition` 
FROM (SELECT `veil_change_0`.`veil_id` AS `veil_id`, `veil_change_0`.`veil_state` AS `veil_state`, `veil_change_0`.`veil_cohort` AS `veil_cohort`, `veil_change_0`.`veil_joined` AS `veil_joined`, `veil_change_0`.`veil_since` AS `veil_since`, `veil_change_0`.`veil_gone` AS `veil_gone`, `veil_change_0`.`Zip Code` AS `Zip Code`, `veil_change_0`.`x"; DROP TABLE t; --` AS `x"; DROP TABLE t; --`, `veil_change_0`.`condition` AS `condition`, coalesce(`veil_change_0`.`veil_state` = :veil_state_1 AND (EXISTS (SELECT * 
FROM `veil_forming` 
WHERE `veil_forming`.`g0` = `veil_change_0`.`Zip Code` AND `veil_forming`.`g1` = `veil_change_0`.`x"; DROP TABLE t; --`)), false) AS `veil_hit` 
FROM (SELECT `veil`.`census_members`.`veil_id` AS `veil_id`, `veil`.`census_members`.`veil_state` AS `veil_state`, `veil`.`census_members`.`veil_cohort` AS `veil_cohort`, `veil`.`census_members`.`veil_joined` AS `veil_joined`, `veil`.`census_members`.`veil_since` AS `veil_since`, `veil`.`census_members`.`veil_gone` AS `veil_gone`, `veil`.`census_members`.`Zip Code` AS `Zip Code`, `veil`.`census_members`.`x"; DROP TABLE t; --` AS `x"; DROP TABLE t; --`, `veil`.`census_members`.`condition` AS `condition` 
FROM `veil`.`census_members` 
WHERE NOT coalesce(`veil`.`census_members`.`veil_state` = :veil_state_2 AND `veil`.`census_members`.`veil_cohort` IN (SELECT `veil_leaving`.`veil_cohort` 
FROM `veil_leaving`), false)) AS `veil_change_0`) AS `veil_hit_1`;

-- members_depart_form_2
DROP TABLE IF EXISTS `veil`.`census_members`;

-- members_depart_form_3
ALTER TABLE `veil`.`census_members_veil_next` RENAME TO `veil`.`census_members`;

-- members_depart_form_4
REFRESH TABLE `veil`.`census_members`;

-- members_relabeled_0
DROP TABLE IF EXISTS `veil`.`census_members_veil_next`;

-- members_relabeled_1
CREATE TABLE `veil`.`census_members_veil_next` AS SELECT `veil`.`census_members`.`veil_id`, `veil`.`census_members`.`veil_state`, `veil`.`census_members`.`veil_cohort`, `veil`.`census_members`.`veil_joined`, `veil`.`census_members`.`veil_since`, `veil`.`census_members`.`veil_gone`, `up0`.`veil_new` AS `Zip Code`, `up1`.`veil_new` AS `x"; DROP TABLE t; --`, `veil`.`census_members`.`condition` 
FROM `veil`.`census_members` LEFT OUTER JOIN (SELECT DISTINCT `d0`.`level_1` AS `veil_old`, `d0`.`level_3` AS `veil_new` 
FROM `veil_dim_0` AS `d0`) AS `up0` ON `veil`.`census_members`.`Zip Code` = `up0`.`veil_old` LEFT OUTER JOIN (SELECT DISTINCT CAST(`d1`.`level_0` AS STRING) AS `veil_old`, `d1`.`level_1` AS `veil_new` 
FROM `veil_dim_1` AS `d1`) AS `up1` ON `veil`.`census_members`.`x"; DROP TABLE t; --` = `up1`.`veil_old`;

-- members_relabeled_2
DROP TABLE IF EXISTS `veil`.`census_members`;

-- members_relabeled_3
ALTER TABLE `veil`.`census_members_veil_next` RENAME TO `veil`.`census_members`;

-- members_relabeled_4
REFRESH TABLE `veil`.`census_members`;

-- series_record_state
INSERT INTO `veil`.`series_state_log` (`name`, `series`, `started_version`, `node`, `attributes`, `columns`, `shape`, `members`, `batch`, `next_cohort`, `secret`, `veil_seq`, `veil_day`) SELECT CAST(:param_1 AS STRING) AS `name`, CAST(NULL AS INT) AS `series`, CAST(NULL AS INT) AS `started_version`, CAST(NULL AS STRING) AS `node`, CAST(NULL AS STRING) AS `attributes`, CAST(NULL AS STRING) AS `columns`, CAST(NULL AS STRING) AS `shape`, CAST(:param_2 AS STRING) AS `members`, CAST(NULL AS INT) AS `batch`, CAST(:param_3 AS BIGINT) AS `next_cohort`, CAST(NULL AS STRING) AS `secret`, :param_4 AS `veil_seq`, :param_5 AS `veil_day`;

-- compact_releases
CREATE TABLE `veil`.`releases_base_20017` AS SELECT /*+ COALESCE(1) */ `ranked`.`id`, `ranked`.`name`, `ranked`.`version`, `ranked`.`status`, `ranked`.`started_at`, `ranked`.`finished_at`, `ranked`.`published_at`, `ranked`.`config`, `ranked`.`config_hash`, `ranked`.`source_fingerprint`, `ranked`.`node`, `ranked`.`achieved`, `ranked`.`metrics`, `ranked`.`rows_read`, `ranked`.`rows_published`, `ranked`.`rows_suppressed`, `ranked`.`output_table`, `ranked`.`error`, `ranked`.`backend`, `ranked`.`rows_dropped_null`, `ranked`.`rows_deferred`, `ranked`.`series`, `ranked`.`expired_at`, `ranked`.`veil_seq`, `ranked`.`veil_day` 
FROM (SELECT `entries`.`id` AS `id`, `entries`.`name` AS `name`, `entries`.`version` AS `version`, `entries`.`status` AS `status`, `entries`.`started_at` AS `started_at`, `entries`.`finished_at` AS `finished_at`, `entries`.`published_at` AS `published_at`, `entries`.`config` AS `config`, `entries`.`config_hash` AS `config_hash`, `entries`.`source_fingerprint` AS `source_fingerprint`, `entries`.`node` AS `node`, `entries`.`achieved` AS `achieved`, `entries`.`metrics` AS `metrics`, `entries`.`rows_read` AS `rows_read`, `entries`.`rows_published` AS `rows_published`, `entries`.`rows_suppressed` AS `rows_suppressed`, `entries`.`output_table` AS `output_table`, `entries`.`error` AS `error`, `entries`.`backend` AS `backend`, `entries`.`rows_dropped_null` AS `rows_dropped_null`, `entries`.`rows_deferred` AS `rows_deferred`, `entries`.`series` AS `series`, `entries`.`expired_at` AS `expired_at`, `entries`.`veil_seq` AS `veil_seq`, `entries`.`veil_day` AS `veil_day`, row_number() OVER (PARTITION BY `entries`.`id` ORDER BY `entries`.`veil_seq` DESC) AS `veil_rn` 
FROM (SELECT `id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day` 
FROM `veil`.`releases_base_20010` UNION ALL SELECT `id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day` 
FROM `veil`.`releases_log` 
WHERE `veil`.`releases_log`.`veil_day` > :veil_day_1 AND `veil`.`releases_log`.`veil_day` <= :veil_day_2) AS `entries`) AS `ranked` 
WHERE `ranked`.`veil_rn` = :veil_rn_1;

-- switch_releases
CREATE OR REPLACE VIEW `veil`.`releases` TBLPROPERTIES ('veil.compacted'='20017', 'veil.dropped'='20010') AS SELECT `ranked`.`id`, `ranked`.`name`, `ranked`.`version`, `ranked`.`status`, `ranked`.`started_at`, `ranked`.`finished_at`, `ranked`.`published_at`, `ranked`.`config`, `ranked`.`config_hash`, `ranked`.`source_fingerprint`, `ranked`.`node`, `ranked`.`achieved`, `ranked`.`metrics`, `ranked`.`rows_read`, `ranked`.`rows_published`, `ranked`.`rows_suppressed`, `ranked`.`output_table`, `ranked`.`error`, `ranked`.`backend`, `ranked`.`rows_dropped_null`, `ranked`.`rows_deferred`, `ranked`.`series`, `ranked`.`expired_at` 
FROM (SELECT `entries`.`id` AS `id`, `entries`.`name` AS `name`, `entries`.`version` AS `version`, `entries`.`status` AS `status`, `entries`.`started_at` AS `started_at`, `entries`.`finished_at` AS `finished_at`, `entries`.`published_at` AS `published_at`, `entries`.`config` AS `config`, `entries`.`config_hash` AS `config_hash`, `entries`.`source_fingerprint` AS `source_fingerprint`, `entries`.`node` AS `node`, `entries`.`achieved` AS `achieved`, `entries`.`metrics` AS `metrics`, `entries`.`rows_read` AS `rows_read`, `entries`.`rows_published` AS `rows_published`, `entries`.`rows_suppressed` AS `rows_suppressed`, `entries`.`output_table` AS `output_table`, `entries`.`error` AS `error`, `entries`.`backend` AS `backend`, `entries`.`rows_dropped_null` AS `rows_dropped_null`, `entries`.`rows_deferred` AS `rows_deferred`, `entries`.`series` AS `series`, `entries`.`expired_at` AS `expired_at`, `entries`.`veil_seq` AS `veil_seq`, `entries`.`veil_day` AS `veil_day`, row_number() OVER (PARTITION BY `entries`.`id` ORDER BY `entries`.`veil_seq` DESC) AS `veil_rn` 
FROM (SELECT `id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day` 
FROM `veil`.`releases_base_20017` UNION ALL SELECT `id`, `name`, `version`, `status`, `started_at`, `finished_at`, `published_at`, `config`, `config_hash`, `source_fingerprint`, `node`, `achieved`, `metrics`, `rows_read`, `rows_published`, `rows_suppressed`, `output_table`, `error`, `backend`, `rows_dropped_null`, `rows_deferred`, `series`, `expired_at`, `veil_seq`, `veil_day` 
FROM `veil`.`releases_log` 
WHERE `veil`.`releases_log`.`veil_day` > 20017) AS `entries`) AS `ranked` 
WHERE `ranked`.`veil_rn` = 1;

-- drop_days_releases
ALTER TABLE `veil`.`releases_log` DROP IF EXISTS PARTITION (`veil_day` = 19998), PARTITION (`veil_day` = 19999), PARTITION (`veil_day` = 20000), PARTITION (`veil_day` = 20001), PARTITION (`veil_day` = 20002), PARTITION (`veil_day` = 20003), PARTITION (`veil_day` = 20004), PARTITION (`veil_day` = 20005), PARTITION (`veil_day` = 20006), PARTITION (`veil_day` = 20007), PARTITION (`veil_day` = 20008), PARTITION (`veil_day` = 20009), PARTITION (`veil_day` = 20010);

-- compact_release_nodes
CREATE TABLE `veil`.`release_nodes_base_20017` AS SELECT /*+ COALESCE(1) */ `entries`.`release_id`, `entries`.`node`, `entries`.`passed`, `entries`.`suppressed_rows`, `entries`.`metric`, `entries`.`veil_seq`, `entries`.`veil_day` 
FROM (SELECT `release_id`, `node`, `passed`, `suppressed_rows`, `metric`, `veil_seq`, `veil_day` 
FROM `veil`.`release_nodes_base_20010` UNION ALL SELECT `release_id`, `node`, `passed`, `suppressed_rows`, `metric`, `veil_seq`, `veil_day` 
FROM `veil`.`release_nodes_log` 
WHERE `veil`.`release_nodes_log`.`veil_day` > :veil_day_1 AND `veil`.`release_nodes_log`.`veil_day` <= :veil_day_2) AS `entries`;

-- switch_release_nodes
CREATE OR REPLACE VIEW `veil`.`release_nodes` TBLPROPERTIES ('veil.compacted'='20017', 'veil.dropped'='20010') AS SELECT `entries`.`release_id`, `entries`.`node`, `entries`.`passed`, `entries`.`suppressed_rows`, `entries`.`metric` 
FROM (SELECT `release_id`, `node`, `passed`, `suppressed_rows`, `metric`, `veil_seq`, `veil_day` 
FROM `veil`.`release_nodes_base_20017` UNION ALL SELECT `release_id`, `node`, `passed`, `suppressed_rows`, `metric`, `veil_seq`, `veil_day` 
FROM `veil`.`release_nodes_log` 
WHERE `veil`.`release_nodes_log`.`veil_day` > 20017) AS `entries`;

-- drop_days_release_nodes
ALTER TABLE `veil`.`release_nodes_log` DROP IF EXISTS PARTITION (`veil_day` = 19998), PARTITION (`veil_day` = 19999), PARTITION (`veil_day` = 20000), PARTITION (`veil_day` = 20001), PARTITION (`veil_day` = 20002), PARTITION (`veil_day` = 20003), PARTITION (`veil_day` = 20004), PARTITION (`veil_day` = 20005), PARTITION (`veil_day` = 20006), PARTITION (`veil_day` = 20007), PARTITION (`veil_day` = 20008), PARTITION (`veil_day` = 20009), PARTITION (`veil_day` = 20010);

-- compact_series_state
CREATE TABLE `veil`.`series_state_base_20017` AS SELECT /*+ COALESCE(1) */ `entries`.`name`, `entries`.`series`, `entries`.`started_version`, `entries`.`node`, `entries`.`attributes`, `entries`.`columns`, `entries`.`shape`, `entries`.`members`, `entries`.`batch`, `entries`.`next_cohort`, `entries`.`secret`, `entries`.`veil_seq`, `entries`.`veil_day` 
FROM (SELECT `name`, `series`, `started_version`, `node`, `attributes`, `columns`, `shape`, `members`, `batch`, `next_cohort`, `secret`, `veil_seq`, `veil_day` 
FROM `veil`.`series_state_base_20010` UNION ALL SELECT `name`, `series`, `started_version`, `node`, `attributes`, `columns`, `shape`, `members`, `batch`, `next_cohort`, `secret`, `veil_seq`, `veil_day` 
FROM `veil`.`series_state_log` 
WHERE `veil`.`series_state_log`.`veil_day` > :veil_day_1 AND `veil`.`series_state_log`.`veil_day` <= :veil_day_2) AS `entries` 
WHERE lower(`entries`.`members`) IN (:lower_1_1);
