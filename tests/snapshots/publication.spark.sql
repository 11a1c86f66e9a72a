-- switch_census_v7
CREATE OR REPLACE VIEW `published`.`census_v7` TBLPROPERTIES ('veil.version'='7', 'veil.release_id'='6f1c2a7e-0000-4000-8000-000000000001') AS SELECT `published`.`census_rows_v7`.`Zip Code`, `published`.`census_rows_v7`.`age`, `published`.`census_rows_v7`.`condition`, `published`.`census_rows_v7`.`x"; DROP TABLE t; --` 
FROM `published`.`census_rows_v7` 
WHERE `published`.`census_rows_v7`.`veil_version` = 7;

-- switch_census_v7_blocks
CREATE OR REPLACE VIEW `published`.`census_v7_blocks` TBLPROPERTIES ('veil.version'='7', 'veil.release_id'='6f1c2a7e-0000-4000-8000-000000000001') AS SELECT `published`.`census_block_rows_v7`.`Zip Code`, `published`.`census_block_rows_v7`.`age`, CAST(sum(`published`.`census_block_rows_v7`.`n`) OVER (PARTITION BY `published`.`census_block_rows_v7`.`Zip Code`, `published`.`census_block_rows_v7`.`age`) AS BIGINT) AS `block_size`, `published`.`census_block_rows_v7`.`condition`, `published`.`census_block_rows_v7`.`n` AS `count` 
FROM `published`.`census_block_rows_v7` 
WHERE `published`.`census_block_rows_v7`.`veil_version` = 7;

-- switch_census_blocks
CREATE OR REPLACE VIEW `published`.`census_blocks` TBLPROPERTIES ('veil.version'='7', 'veil.release_id'='6f1c2a7e-0000-4000-8000-000000000001') AS SELECT `published`.`census_block_rows_v7`.`Zip Code`, `published`.`census_block_rows_v7`.`age`, CAST(sum(`published`.`census_block_rows_v7`.`n`) OVER (PARTITION BY `published`.`census_block_rows_v7`.`Zip Code`, `published`.`census_block_rows_v7`.`age`) AS BIGINT) AS `block_size`, `published`.`census_block_rows_v7`.`condition`, `published`.`census_block_rows_v7`.`n` AS `count` 
FROM `published`.`census_block_rows_v7` 
WHERE `published`.`census_block_rows_v7`.`veil_version` = 7;

-- switch_census_releases
CREATE OR REPLACE VIEW `published`.`census_releases` TBLPROPERTIES ('veil.version'='7', 'veil.release_id'='6f1c2a7e-0000-4000-8000-000000000001') AS SELECT `veil`.`releases`.`version`, `veil`.`releases`.`id` AS `release_id`, `veil`.`releases`.`published_at`, `veil`.`releases`.`node`, `veil`.`releases`.`rows_published`, `veil`.`releases`.`rows_suppressed`, `veil`.`releases`.`achieved`, `veil`.`releases`.`output_table`, `veil`.`releases`.`status`, `veil`.`releases`.`rows_deferred`, `veil`.`releases`.`version` = 7 AS `current` 
FROM `veil`.`releases` 
WHERE `veil`.`releases`.`name` = 'census' AND `veil`.`releases`.`status` IN ('published', 'expired');

-- switch_census
CREATE OR REPLACE VIEW `published`.`census` TBLPROPERTIES ('veil.version'='7', 'veil.release_id'='6f1c2a7e-0000-4000-8000-000000000001') AS SELECT `published`.`census_rows_v7`.`Zip Code`, `published`.`census_rows_v7`.`age`, `published`.`census_rows_v7`.`condition`, `published`.`census_rows_v7`.`x"; DROP TABLE t; --` 
FROM `published`.`census_rows_v7` 
WHERE `published`.`census_rows_v7`.`veil_version` = 7;

-- show_properties
SHOW TBLPROPERTIES `published`.`census`;

-- drop_version_view
DROP VIEW IF EXISTS `published`.`census_v1_blocks`;

-- drop_version_table
DROP TABLE IF EXISTS `published`.`census_block_rows_v1`;

-- valued_cells
SELECT `d0`.`code_1` AS `g0`, `d1`.`code_0` AS `g1`, `src`.`condition` AS `v0`, `src`.`x"; DROP TABLE t; --` AS `v1`, count(*) AS `n` 
FROM `raw`.`Patients` AS `src` JOIN `veil_dim_0` AS `d0` ON `src`.`Zip Code` = `d0`.`level_0` JOIN `veil_dim_1` AS `d1` ON `src`.`age` = `d1`.`level_0` 
WHERE `src`.`condition` IS NOT NULL GROUP BY `d0`.`code_1`, `d1`.`code_0`, `src`.`condition`, `src`.`x"; DROP TABLE t; --`;
