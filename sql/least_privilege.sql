-- Least privilege for Veil on PostgreSQL (docs/how-to/postgresql-least-privilege.md): what an administrator
-- runs once, as a superuser (or a role with CREATEROLE that is a member of Veil's role and may grant on the
-- source table and the database), with psql, every name a psql variable:
--
--   psql "postgresql://admin@db/warehouse" -v ON_ERROR_STOP=1 \
--        -v veil_role=veil -v source_schema=raw -v source_table=census \
--        -v catalog_schema=veil -v publish_schema=published \
--        -f sql/least_privilege.sql
--
-- Veil's role gets no superuser, no CREATEDB, no CREATEROLE and no CREATE on the database. It owns its two
-- schemas: only an object's owner (or a holder of the grant option) can GRANT on it — PostgreSQL merely warns
-- "no privileges were granted" otherwise — so owning the publication schema is what lets Veil grant USAGE on
-- it to the roles of `grant_select_to`, and a release fails, naming the privilege, when a grant is not applied.
-- The analysts' roles need nothing here: they must exist, and each release grants them USAGE on the
-- publication schema and SELECT on its views, nothing else.

-- Veil's login role (give it a password afterwards: \password veil).
CREATE ROLE :"veil_role" LOGIN;

-- It reads the source table and nothing else of the source schema.
GRANT USAGE ON SCHEMA :"source_schema" TO :"veil_role";
GRANT SELECT ON TABLE :"source_schema".:"source_table" TO :"veil_role";

-- Its searches work in temporary tables (PUBLIC has TEMPORARY by default; a hardened database revokes it).
GRANT TEMPORARY ON DATABASE :"DBNAME" TO :"veil_role";

-- Its catalog and its publication schema, owned by Veil's role.
CREATE SCHEMA :"catalog_schema" AUTHORIZATION :"veil_role";
CREATE SCHEMA :"publish_schema" AUTHORIZATION :"veil_role";
