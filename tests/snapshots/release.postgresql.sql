-- try_advisory_lock
SELECT pg_try_advisory_lock(%(param_1)s::BIGINT) AS pg_try_advisory_lock_1;

-- fingerprint
SELECT count(*) AS count_1, coalesce(sum(CAST(hashtextextended(CAST((raw."Patients"."Zip Code", raw."Patients".age, raw."Patients".nationality, raw."Patients".condition) AS TEXT), %(hashtextextended_1)s::INTEGER) AS NUMERIC(38, 0))), %(coalesce_2)s::INTEGER) AS coalesce_1 
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
WHERE pg_catalog.pg_roles.rolname = %(rolname_1)s::VARCHAR;

-- grant_schema
GRANT USAGE ON SCHEMA published TO analyst;

-- grant_view
GRANT SELECT ON published.inpatient TO analyst;

-- privileges_held
SELECT has_schema_privilege(%(has_schema_privilege_2)s::VARCHAR, %(has_schema_privilege_3)s::VARCHAR, %(has_schema_privilege_4)s::VARCHAR) AS has_schema_privilege_1, has_table_privilege(%(has_table_privilege_2)s::VARCHAR, format(%(format_1)s::VARCHAR, %(format_2)s::VARCHAR, %(format_3)s::VARCHAR), %(has_table_privilege_3)s::VARCHAR) AS has_table_privilege_1, has_table_privilege(%(has_table_privilege_5)s::VARCHAR, format(%(format_4)s::VARCHAR, %(format_5)s::VARCHAR, %(format_6)s::VARCHAR), %(has_table_privilege_6)s::VARCHAR) AS has_table_privilege_4, has_schema_privilege(CURRENT_USER, %(has_schema_privilege_6)s::VARCHAR, %(has_schema_privilege_7)s::VARCHAR) AS has_schema_privilege_5, CURRENT_USER AS current_user_1;

-- advisory_unlock
SELECT pg_advisory_unlock(%(param_1)s::BIGINT) AS pg_advisory_unlock_1;
