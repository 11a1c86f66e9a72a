-- revision
SELECT veil.alembic_version.version_num 
FROM veil.alembic_version;

-- record_revision
INSERT INTO veil.alembic_version (version_num) VALUES (%(version_num)s::VARCHAR);

-- start_run
INSERT INTO veil.releases (id, name, status, started_at, config, config_hash, backend) VALUES (%(id)s::VARCHAR, %(name)s::VARCHAR, %(status)s::VARCHAR, %(started_at)s::TIMESTAMP WITHOUT TIME ZONE, %(config)s::VARCHAR, %(config_hash)s::VARCHAR, %(backend)s::VARCHAR);

-- close_interrupted
UPDATE veil.releases SET status=%(status)s::VARCHAR, finished_at=%(finished_at)s::TIMESTAMP WITHOUT TIME ZONE, error=%(error)s::VARCHAR WHERE veil.releases.name = %(name_1)s::VARCHAR AND veil.releases.status = %(status_1)s::VARCHAR;

-- runs_of
SELECT veil.releases.version, veil.releases.status, veil.releases.config_hash, veil.releases.source_fingerprint, veil.releases.id 
FROM veil.releases 
WHERE veil.releases.name = %(name_1)s::VARCHAR;

-- skip_run
UPDATE veil.releases SET status=%(status)s::VARCHAR, finished_at=%(finished_at)s::TIMESTAMP WITHOUT TIME ZONE, source_fingerprint=%(source_fingerprint)s::VARCHAR, error=%(error)s::VARCHAR WHERE veil.releases.id = %(id_1)s::VARCHAR;

-- stored_hierarchies
SELECT DISTINCT veil.hierarchies.digest 
FROM veil.hierarchies 
WHERE veil.hierarchies.digest IN (__[POSTCOMPILE_digest_1]) AND veil.hierarchies.definition IS NOT NULL;

-- forget_hierarchy_texts
UPDATE veil.hierarchies SET definition=%(definition)s::VARCHAR WHERE veil.hierarchies.definition IS NOT NULL AND veil.hierarchies.release_id IN (SELECT veil.releases.id 
FROM veil.releases 
WHERE veil.releases.status = %(status_1)s::VARCHAR) AND (veil.hierarchies.digest NOT IN (SELECT used.digest 
FROM veil.hierarchies AS used JOIN veil.releases ON veil.releases.id = used.release_id 
WHERE veil.releases.status = %(status_2)s::VARCHAR AND used.digest IS NOT NULL));

-- published_versions
SELECT veil.releases.version 
FROM veil.releases 
WHERE veil.releases.name = %(name_1)s::VARCHAR AND veil.releases.status = %(status_1)s::VARCHAR ORDER BY veil.releases.version DESC;

-- latest_published_version
SELECT veil.releases.version 
FROM veil.releases 
WHERE veil.releases.name = %(name_1)s::VARCHAR AND veil.releases.status = %(status_1)s::VARCHAR ORDER BY veil.releases.version DESC 
 LIMIT %(param_1)s::INTEGER;

-- expire_versions
UPDATE veil.releases SET status=%(status)s::VARCHAR, expired_at=%(expired_at)s::TIMESTAMP WITHOUT TIME ZONE WHERE veil.releases.name = %(name_1)s::VARCHAR AND veil.releases.version IN (__[POSTCOMPILE_version_1]) AND veil.releases.status = %(status_1)s::VARCHAR;

-- publish_run
UPDATE veil.releases SET version=%(version)s::INTEGER, status=%(status)s::VARCHAR, finished_at=%(finished_at)s::TIMESTAMP WITHOUT TIME ZONE, published_at=%(published_at)s::TIMESTAMP WITHOUT TIME ZONE, config_hash=%(config_hash)s::VARCHAR, source_fingerprint=%(source_fingerprint)s::VARCHAR, node=%(node)s::VARCHAR, achieved=%(achieved)s::VARCHAR, metrics=%(metrics)s::VARCHAR, rows_read=%(rows_read)s::BIGINT, rows_published=%(rows_published)s::BIGINT, rows_suppressed=%(rows_suppressed)s::BIGINT, output_table=%(output_table)s::VARCHAR, rows_dropped_null=%(rows_dropped_null)s::BIGINT, rows_deferred=%(rows_deferred)s::BIGINT, series=%(series)s::VARCHAR WHERE veil.releases.id = %(id_1)s::VARCHAR;

-- expired_versions
SELECT veil.releases.version 
FROM veil.releases 
WHERE veil.releases.name = %(name_1)s::VARCHAR AND veil.releases.status = %(status_1)s::VARCHAR;

-- set_series
UPDATE veil.releases SET series=%(series)s::VARCHAR WHERE veil.releases.id = %(id_1)s::VARCHAR;

-- fail_run
UPDATE veil.releases SET status=%(status)s::VARCHAR, finished_at=%(finished_at)s::TIMESTAMP WITHOUT TIME ZONE, error=%(error)s::VARCHAR WHERE veil.releases.id = %(id_1)s::VARCHAR AND veil.releases.status = %(status_1)s::VARCHAR;

-- run_status
SELECT veil.releases.status 
FROM veil.releases 
WHERE veil.releases.id = %(id_1)s::VARCHAR;

-- run_summary
SELECT veil.releases.status, veil.releases.version, veil.releases.node, veil.releases.rows_published, veil.releases.rows_suppressed, veil.releases.rows_deferred, veil.releases.achieved, veil.releases.series, veil.releases.output_table, veil.releases.error 
FROM veil.releases 
WHERE veil.releases.id = %(id_1)s::VARCHAR;

-- record_ledger_version
INSERT INTO veil.series_versions (name, version, release_id, node, attributes, columns, hierarchies, policy, published_at) VALUES (%(name)s::VARCHAR, %(version)s::INTEGER, %(release_id)s::VARCHAR, %(node)s::VARCHAR, %(attributes)s::VARCHAR, %(columns)s::VARCHAR, %(hierarchies)s::VARCHAR, %(policy)s::VARCHAR, %(published_at)s::TIMESTAMP WITHOUT TIME ZONE);

-- history
SELECT veil.releases.version, veil.releases.status, veil.releases.node, veil.releases.rows_published, veil.releases.rows_suppressed, veil.releases.rows_deferred, veil.releases.achieved, veil.releases.started_at, veil.releases.published_at, veil.releases.error, veil.releases.series 
FROM veil.releases 
WHERE veil.releases.name = %(name_1)s::VARCHAR ORDER BY veil.releases.started_at;

-- kept_versions
SELECT veil.releases.version, veil.releases.status 
FROM veil.releases 
WHERE veil.releases.name = %(name_1)s::VARCHAR AND veil.releases.status IN (__[POSTCOMPILE_status_1]);

-- rows_published
SELECT veil.releases.rows_published 
FROM veil.releases 
WHERE veil.releases.name = %(name_1)s::VARCHAR AND veil.releases.version = %(version_1)s::INTEGER AND veil.releases.status = %(status_1)s::VARCHAR;

-- record_rollback
INSERT INTO veil.releases (id, name, version, status, started_at, finished_at, config, config_hash, error, backend) VALUES (%(id)s::VARCHAR, %(name)s::VARCHAR, %(version)s::INTEGER, %(status)s::VARCHAR, %(started_at)s::TIMESTAMP WITHOUT TIME ZONE, %(finished_at)s::TIMESTAMP WITHOUT TIME ZONE, %(config)s::VARCHAR, %(config_hash)s::VARCHAR, %(error)s::VARCHAR, %(backend)s::VARCHAR);

-- series_records
SELECT veil.releases.version, veil.releases.node, veil.releases.series, veil.releases.rows_published 
FROM veil.releases 
WHERE veil.releases.name = %(name_1)s::VARCHAR AND veil.releases.status IN (__[POSTCOMPILE_status_1]) ORDER BY veil.releases.version;

-- ledger_columns
SELECT veil.series_versions.columns 
FROM veil.series_versions 
WHERE veil.series_versions.name = %(name_1)s::VARCHAR;

-- adopt_run
UPDATE veil.releases SET version=%(version)s::INTEGER, status=%(status)s::VARCHAR, finished_at=%(finished_at)s::TIMESTAMP WITHOUT TIME ZONE, published_at=%(published_at)s::TIMESTAMP WITHOUT TIME ZONE, node=coalesce((SELECT max(veil.series_versions.node) AS max_1 
FROM veil.series_versions 
WHERE veil.series_versions.version = %(version_1)s::INTEGER AND veil.series_versions.release_id = %(release_id_1)s::VARCHAR), (SELECT max(veil.series_state.node) AS max_2 
FROM veil.series_state 
WHERE veil.series_state.members = %(members_1)s::VARCHAR)), output_table=%(output_table)s::VARCHAR, error=%(error)s::VARCHAR WHERE veil.releases.id = %(id_1)s::VARCHAR;

-- ledger_versions
SELECT veil.series_versions.version, veil.series_versions.release_id 
FROM veil.series_versions 
WHERE veil.series_versions.name = %(name_1)s::VARCHAR;

-- keep_number
UPDATE veil.releases SET version=%(version)s::INTEGER, error=%(error)s::VARCHAR WHERE veil.releases.id = %(id_1)s::VARCHAR;

-- suppressed_table
CREATE TEMPORARY TABLE veil_suppressed (
	g0 INTEGER, 
	g1 INTEGER
);

-- withheld_table
CREATE TEMPORARY TABLE veil_withheld (
	id INTEGER, 
	g0 INTEGER, 
	g1 INTEGER, 
	v0 TEXT, 
	v1 INTEGER, 
	held BIGINT
);

-- ledger_changed_table
CREATE TEMPORARY TABLE veil_changed_blocks (
	id BIGINT
);

-- ledger_new_cells_table
CREATE TEMPORARY TABLE veil_new_cells (
	block_id BIGINT, 
	value_id BIGINT, 
	count BIGINT
);

-- drop_ledger_changed_table
DROP TABLE veil_changed_blocks;

-- drop_ledger_block_ids
DROP TABLE veil_cell_blocks;

-- count_cells
SELECT count(*) AS count_1 
FROM veil_cells;

-- members_table
CREATE TABLE veil.census_members (
	veil_id BIGINT NOT NULL, 
	veil_state SMALLINT, 
	veil_cohort BIGINT, 
	veil_joined INTEGER, 
	veil_since INTEGER, 
	veil_gone INTEGER, 
	"Zip Code" TEXT, 
	"x""; DROP TABLE t; --" TEXT, 
	condition TEXT
);

-- members_leaving_table
CREATE TEMPORARY TABLE veil_leaving (
	veil_cohort BIGINT
);

-- members_forming_table
CREATE TEMPORARY TABLE veil_forming (
	veil_cohort BIGINT, 
	g0 TEXT, 
	g1 TEXT
);

-- members_histograms
SELECT veil.census_members.veil_state, veil.census_members.veil_cohort, veil.census_members."Zip Code", veil.census_members."x""; DROP TABLE t; --", veil.census_members.condition, count(*) AS n 
FROM veil.census_members GROUP BY veil.census_members.veil_state, veil.census_members.veil_cohort, veil.census_members."Zip Code", veil.census_members."x""; DROP TABLE t; --", veil.census_members.condition;

-- members_kept_histograms
CREATE TEMPORARY TABLE veil_histograms AS SELECT veil.census_members.veil_state, veil.census_members.veil_cohort, veil.census_members."Zip Code", veil.census_members."x""; DROP TABLE t; --", veil.census_members.condition, count(*) AS n 
FROM veil.census_members GROUP BY veil.census_members.veil_state, veil.census_members.veil_cohort, veil.census_members."Zip Code", veil.census_members."x""; DROP TABLE t; --", veil.census_members.condition;

-- members_undecided
SELECT veil_histograms.veil_state, veil_histograms.veil_cohort, veil_histograms."Zip Code", veil_histograms."x""; DROP TABLE t; --", veil_histograms.condition, veil_histograms.n 
FROM veil_histograms 
WHERE veil_histograms.veil_state = %(veil_state_1)s::INTEGER OR veil_histograms.veil_cohort IN (SELECT s.veil_cohort 
FROM (SELECT veil_histograms.veil_cohort AS veil_cohort, sum(CASE WHEN (veil_histograms.veil_state = %(veil_state_2)s::INTEGER) THEN veil_histograms.n ELSE %(param_1)s::INTEGER END) AS live, sum(CASE WHEN (veil_histograms.veil_state = %(veil_state_3)s::INTEGER) THEN veil_histograms.n ELSE %(param_2)s::INTEGER END) AS gone 
FROM veil_histograms 
WHERE veil_histograms.veil_state != %(veil_state_4)s::INTEGER GROUP BY veil_histograms.veil_cohort) AS s 
WHERE s.gone >= %(gone_1)s::INTEGER AND s.live >= %(live_1)s::INTEGER);

-- members_by_size
SELECT CASE WHEN (s.live = %(live_1)s::INTEGER) THEN s.veil_cohort END AS veil_cohort, sum(s.gone) AS gone 
FROM (SELECT veil_histograms.veil_cohort AS veil_cohort, sum(CASE WHEN (veil_histograms.veil_state = %(veil_state_1)s::INTEGER) THEN veil_histograms.n ELSE %(param_1)s::INTEGER END) AS live, sum(CASE WHEN (veil_histograms.veil_state = %(veil_state_2)s::INTEGER) THEN veil_histograms.n ELSE %(param_2)s::INTEGER END) AS gone 
FROM veil_histograms 
WHERE veil_histograms.veil_state != %(veil_state_3)s::INTEGER GROUP BY veil_histograms.veil_cohort) AS s 
WHERE s.gone > %(gone_1)s::INTEGER AND (s.live = %(live_2)s::INTEGER OR s.gone < %(gone_2)s::INTEGER OR s.live < %(live_3)s::INTEGER) GROUP BY CASE WHEN (s.live = %(live_1)s::INTEGER) THEN s.veil_cohort END;

-- members_totals
SELECT veil_histograms.veil_state, veil_histograms.condition, sum(veil_histograms.n) AS n 
FROM veil_histograms GROUP BY veil_histograms.veil_state, veil_histograms.condition;

-- members_leave
UPDATE veil.census_members SET veil_state=%(veil_state)s::SMALLINT, veil_gone=%(veil_gone)s::INTEGER WHERE veil.census_members.veil_state = %(veil_state_1)s::SMALLINT AND NOT (EXISTS (SELECT * 
FROM veil_now 
WHERE veil.census_members.veil_id = veil_now.veil_id));

-- members_forget
DELETE FROM veil.census_members WHERE veil.census_members.veil_state = %(veil_state_1)s::SMALLINT AND NOT (EXISTS (SELECT * 
FROM veil_now 
WHERE veil.census_members.veil_id = veil_now.veil_id));

-- members_arrive
INSERT INTO veil.census_members (veil_id, veil_state, veil_joined, "Zip Code", "x""; DROP TABLE t; --", condition) SELECT veil_now.veil_id, %(param_1)s::SMALLINT AS anon_1, %(param_2)s::INTEGER AS anon_2, veil_now."Zip Code", veil_now."x""; DROP TABLE t; --", veil_now.condition 
FROM veil_now 
WHERE NOT (EXISTS (SELECT * 
FROM veil.census_members 
WHERE veil.census_members.veil_id = veil_now.veil_id));

-- members_form
UPDATE veil.census_members SET veil_state=%(veil_state)s::SMALLINT, veil_cohort=(SELECT max(veil_forming.veil_cohort) AS max_1 
FROM veil_forming 
WHERE veil_forming.g0 = veil.census_members."Zip Code" AND veil_forming.g1 = veil.census_members."x""; DROP TABLE t; --"), veil_since=%(veil_since)s::INTEGER WHERE veil.census_members.veil_state = %(veil_state_1)s::SMALLINT AND (EXISTS (SELECT * 
FROM veil_forming 
WHERE veil_forming.g0 = veil.census_members."Zip Code" AND veil_forming.g1 = veil.census_members."x""; DROP TABLE t; --"));

-- members_depart
DELETE FROM veil.census_members WHERE veil.census_members.veil_state = %(veil_state_1)s::SMALLINT AND veil.census_members.veil_cohort IN (SELECT veil_leaving.veil_cohort 
FROM veil_leaving);

-- members_withdraw
UPDATE veil.census_members SET veil_state=%(veil_state)s::SMALLINT, veil_cohort=%(veil_cohort)s::BIGINT, veil_since=%(veil_since)s::INTEGER WHERE veil.census_members.veil_state = %(veil_state_1)s::SMALLINT AND veil.census_members.veil_cohort IN (SELECT veil_leaving.veil_cohort 
FROM veil_leaving);

-- members_erase
DELETE FROM veil.census_members WHERE veil.census_members.veil_state = %(veil_state_1)s::SMALLINT;

-- members_takeovers
CREATE TEMPORARY TABLE veil_taking AS SELECT anon_1.veil_id AS veil_waiting, anon_2.veil_id AS veil_standing, anon_2.veil_cohort 
FROM (SELECT w.veil_id AS veil_id, w.veil_cohort AS veil_cohort, w."Zip Code" AS "Zip Code", w."x""; DROP TABLE t; --" AS "x""; DROP TABLE t; --", w.condition AS condition, row_number() OVER (PARTITION BY w."Zip Code", w."x""; DROP TABLE t; --", w.condition ORDER BY w.veil_id) AS veil_rank 
FROM veil.census_members AS w 
WHERE w.veil_state = %(veil_state_1)s::SMALLINT) AS anon_1 JOIN (SELECT g.veil_id AS veil_id, g.veil_cohort AS veil_cohort, g."Zip Code" AS "Zip Code", g."x""; DROP TABLE t; --" AS "x""; DROP TABLE t; --", g.condition AS condition, row_number() OVER (PARTITION BY g."Zip Code", g."x""; DROP TABLE t; --", g.condition ORDER BY g.veil_cohort, g.veil_id) AS veil_rank 
FROM veil.census_members AS g 
WHERE g.veil_state = %(veil_state_2)s::SMALLINT) AS anon_2 ON anon_1.veil_rank = anon_2.veil_rank AND anon_1."Zip Code" IS NOT DISTINCT FROM anon_2."Zip Code" AND anon_1."x""; DROP TABLE t; --" IS NOT DISTINCT FROM anon_2."x""; DROP TABLE t; --" AND anon_1.condition IS NOT DISTINCT FROM anon_2.condition;

-- members_taking_count
SELECT count(*) AS count_1 
FROM veil_taking;

-- members_take_over
UPDATE veil.census_members SET veil_state=%(veil_state)s::SMALLINT, veil_cohort=(SELECT max(veil_taking.veil_cohort) AS max_1 
FROM veil_taking 
WHERE veil.census_members.veil_id = veil_taking.veil_waiting), veil_since=%(veil_since)s::INTEGER WHERE veil.census_members.veil_state = %(veil_state_1)s::SMALLINT AND veil.census_members.veil_id IN (SELECT veil_taking.veil_waiting 
FROM veil_taking);

-- members_taken_over
DELETE FROM veil.census_members WHERE veil.census_members.veil_state = %(veil_state_1)s::SMALLINT AND veil.census_members.veil_id IN (SELECT veil_taking.veil_standing 
FROM veil_taking);

-- members_joined_after
SELECT count(*) AS count_1 
FROM veil.census_members 
WHERE veil.census_members.veil_joined > %(veil_joined_1)s::INTEGER;

-- members_cohort_rows
SELECT c.live, c.gone, count(*) AS n 
FROM (SELECT sum(CASE WHEN (veil.census_members.veil_state = %(veil_state_1)s::SMALLINT) THEN %(param_1)s::INTEGER ELSE %(param_2)s::INTEGER END) AS live, sum(CASE WHEN (veil.census_members.veil_state = %(veil_state_2)s::SMALLINT) THEN %(param_3)s::INTEGER ELSE %(param_4)s::INTEGER END) AS gone 
FROM veil.census_members 
WHERE veil.census_members.veil_state != %(veil_state_3)s::SMALLINT GROUP BY veil.census_members.veil_cohort) AS c GROUP BY c.live, c.gone;

-- members_unmapped
SELECT count(*) AS count_1 
FROM veil.census_members 
WHERE veil.census_members."Zip Code" IS NOT NULL AND NOT (EXISTS (SELECT * 
FROM veil_dim_0 AS d 
WHERE veil.census_members."Zip Code" = d.level_1));

-- series_state_of
SELECT veil.series_state.series, veil.series_state.started_version, veil.series_state.node, veil.series_state.shape, veil.series_state.members, veil.series_state.batch, veil.series_state.next_cohort, veil.series_state.secret 
FROM veil.series_state 
WHERE veil.series_state.name = %(name_1)s::VARCHAR;

-- series_forget_state
DELETE FROM veil.series_state WHERE veil.series_state.name = %(name_1)s::VARCHAR;

-- series_record_state
INSERT INTO veil.series_state (name, members, next_cohort) VALUES (%(name)s::VARCHAR, %(members)s::VARCHAR, %(next_cohort)s::BIGINT);

-- members_generation
CREATE TABLE veil.census_members_v4 AS SELECT * 
FROM veil.census_members_v3;

-- members_relabeled_0
DROP TABLE IF EXISTS veil.census_members_moving;

-- members_relabeled_1
CREATE TABLE veil.census_members_moving (
	veil_id BIGINT NOT NULL, 
	veil_state SMALLINT, 
	veil_cohort BIGINT, 
	veil_joined INTEGER, 
	veil_since INTEGER, 
	veil_gone INTEGER, 
	"Zip Code" TEXT, 
	"x""; DROP TABLE t; --" TEXT, 
	condition TEXT
);

-- members_relabeled_2
INSERT INTO veil.census_members_moving (veil_id, veil_state, veil_cohort, veil_joined, veil_since, veil_gone, "Zip Code", "x""; DROP TABLE t; --", condition) SELECT veil.census_members.veil_id, veil.census_members.veil_state, veil.census_members.veil_cohort, veil.census_members.veil_joined, veil.census_members.veil_since, veil.census_members.veil_gone, up0.veil_new AS "Zip Code", up1.veil_new AS "x""; DROP TABLE t; --", veil.census_members.condition 
FROM veil.census_members LEFT OUTER JOIN (SELECT DISTINCT d0.level_1 AS veil_old, d0.level_3 AS veil_new 
FROM veil_dim_0 AS d0) AS up0 ON veil.census_members."Zip Code" = up0.veil_old LEFT OUTER JOIN (SELECT DISTINCT CAST(d1.level_0 AS TEXT) AS veil_old, d1.level_1 AS veil_new 
FROM veil_dim_1 AS d1) AS up1 ON veil.census_members."x""; DROP TABLE t; --" = up1.veil_old;

-- members_relabeled_3
DROP TABLE IF EXISTS veil.census_members;

-- members_relabeled_4
CREATE TABLE veil.census_members (
	veil_id BIGINT NOT NULL, 
	veil_state SMALLINT, 
	veil_cohort BIGINT, 
	veil_joined INTEGER, 
	veil_since INTEGER, 
	veil_gone INTEGER, 
	"Zip Code" TEXT, 
	"x""; DROP TABLE t; --" TEXT, 
	condition TEXT
);

-- members_relabeled_5
INSERT INTO veil.census_members (veil_id, veil_state, veil_cohort, veil_joined, veil_since, veil_gone, "Zip Code", "x""; DROP TABLE t; --", condition) SELECT veil.census_members_moving.veil_id, veil.census_members_moving.veil_state, veil.census_members_moving.veil_cohort, veil.census_members_moving.veil_joined, veil.census_members_moving.veil_since, veil.census_members_moving.veil_gone, veil.census_members_moving."Zip Code", veil.census_members_moving."x""; DROP TABLE t; --", veil.census_members_moving.condition 
FROM veil.census_members_moving;

-- members_relabeled_6
DROP TABLE IF EXISTS veil.census_members_moving;
