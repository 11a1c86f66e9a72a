-- try_advisory_lock
SELECT pg_try_advisory_lock($1) AS pg_try_advisory_lock_1;

-- fingerprint
SELECT count(*) AS count_1, coalesce(sum(CAST(hash(raw."Patients"."Zip Code", raw."Patients".age, raw."Patients".nationality, raw."Patients".condition) AS NUMERIC(38, 0))), $1) AS coalesce_1 
FROM raw."Patients";

-- create_release_schema
CREATE SCHEMA IF NOT EXISTS published;

-- suppressed_table
CREATE TEMPORARY TABLE veil_suppressed (
	g0 INTEGER, 
	g1 INTEGER, 
	g2 INTEGER
);

-- level0_labels
SELECT veil_dim_1.code_0, CAST(veil_dim_1.level_0 AS TEXT) AS level_0 
FROM veil_dim_1;

-- role_exists
SELECT count(*) AS count_1 
FROM pg_catalog.pg_roles 
WHERE pg_catalog.pg_roles.rolname = $1;

-- grant_schema
GRANT USAGE ON SCHEMA published TO analyst;

-- grant_view
GRANT SELECT ON published.inpatient TO analyst;

-- privileges_held
SELECT has_schema_privilege($1, $2, $3) AS has_schema_privilege_1, has_table_privilege($4, format($5, $6, $7), $8) AS has_table_privilege_1, has_table_privilege($9, format($10, $11, $12), $13) AS has_table_privilege_4, has_schema_privilege(CURRENT_USER, $14, $15) AS has_schema_privilege_5, CURRENT_USER AS current_user_1;

-- advisory_unlock
SELECT pg_advisory_unlock($1) AS pg_advisory_unlock_1;
