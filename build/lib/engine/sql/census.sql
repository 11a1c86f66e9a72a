-- Veil's seeded synthetic census (demo and benchmark data), generated inside DuckDB.
-- Parameters (bound, never formatted): $rows = number of people, $seed = any integer.
-- Every draw is a deterministic hash of (person, seed, draw number), so a (rows, seed) pair always
-- yields the same table, whatever the thread count.  Distributions are skewed and correlated like
-- the UCI Adult census: age right-skewed; marital status by age; education skewed to HS-grad /
-- Some-college; occupation by education and sex; income log-normal, rising with education, age (to
-- the mid-50s) and for men; zip codes Zipf-like over ~7,000 codes in a few dense regions.
SELECT
    person_id,
    age,
    sex,
    race,
    marital_status,
    education,
    zip,
    occupation,
    CAST(round(exp(8.9 + 0.11 * edu_years + 0.045 * (age - 17) - 0.00055 * (age - 17) * (age - 17)
                   + CASE WHEN sex = 'Male' THEN 0.22 ELSE 0.0 END
                   + 0.55 * sqrt(-2.0 * ln(u9)) * cos(2.0 * pi() * u10)) / 100.0) * 100 AS INTEGER) AS income
FROM (
    SELECT *,
        CASE
            WHEN u6 < 0.15 THEN CASE WHEN edu_years >= 13 THEN 'Prof-specialty' WHEN edu_years >= 10 THEN 'Tech-support' ELSE 'Craft-repair' END
            WHEN u6 < 0.30 THEN CASE WHEN edu_years >= 13 THEN 'Exec-managerial' WHEN sex = 'Female' THEN 'Adm-clerical' ELSE 'Machine-op-inspct' END
            WHEN u6 < 0.42 THEN CASE WHEN edu_years >= 12 THEN 'Prof-specialty' WHEN sex = 'Female' THEN 'Other-service' ELSE 'Craft-repair' END
            WHEN u6 < 0.52 THEN CASE WHEN sex = 'Female' THEN 'Adm-clerical' ELSE 'Transport-moving' END
            WHEN u6 < 0.62 THEN 'Sales'
            WHEN u6 < 0.71 THEN CASE WHEN edu_years >= 13 THEN 'Exec-managerial' ELSE 'Other-service' END
            WHEN u6 < 0.78 THEN CASE WHEN edu_years <= 9 THEN 'Handlers-cleaners' ELSE 'Adm-clerical' END
            WHEN u6 < 0.84 THEN CASE WHEN edu_years <= 9 THEN 'Machine-op-inspct' ELSE 'Tech-support' END
            WHEN u6 < 0.89 THEN CASE WHEN sex = 'Male' THEN 'Farming-fishing' ELSE 'Other-service' END
            WHEN u6 < 0.93 THEN 'Transport-moving'
            WHEN u6 < 0.96 THEN 'Protective-serv'
            WHEN u6 < 0.985 THEN 'Handlers-cleaners'
            WHEN u6 < 0.997 THEN 'Priv-house-serv'
            ELSE 'Armed-Forces'
        END AS occupation,
        CASE
            WHEN u7 < 0.55 THEN lpad(CAST(100 + CAST(floor(40 * pow(u8, 2.0)) AS INTEGER) AS VARCHAR), 3, '0')
            WHEN u7 < 0.85 THEN lpad(CAST(300 + CAST(floor(200 * pow(u8, 1.5)) AS INTEGER) AS VARCHAR), 3, '0')
            ELSE lpad(CAST(500 + CAST(floor(499 * u8) AS INTEGER) AS VARCHAR), 3, '0')
        END || lpad(CAST(CAST(floor(10 * pow(u11, 1.8)) AS INTEGER) AS VARCHAR), 2, '0') AS zip
    FROM (
        SELECT *,
            CASE education
                WHEN 'Preschool' THEN 1 WHEN '1st-4th' THEN 2 WHEN '5th-6th' THEN 3 WHEN '7th-8th' THEN 4
                WHEN '9th' THEN 5 WHEN '10th' THEN 6 WHEN '11th' THEN 7 WHEN '12th' THEN 8 WHEN 'HS-grad' THEN 9
                WHEN 'Some-college' THEN 10 WHEN 'Assoc-voc' THEN 11 WHEN 'Assoc-acdm' THEN 12
                WHEN 'Bachelors' THEN 13 WHEN 'Masters' THEN 14 WHEN 'Prof-school' THEN 15 ELSE 16
            END AS edu_years
        FROM (
            SELECT *,
                CASE
                    WHEN age < 25 THEN CASE WHEN u4 < 0.85 THEN 'Never-married' WHEN u4 < 0.95 THEN 'Married-civ-spouse' WHEN u4 < 0.98 THEN 'Divorced' ELSE 'Separated' END
                    WHEN age < 40 THEN CASE WHEN u4 < 0.35 THEN 'Never-married' WHEN u4 < 0.80 THEN 'Married-civ-spouse' WHEN u4 < 0.92 THEN 'Divorced' WHEN u4 < 0.96 THEN 'Separated' WHEN u4 < 0.98 THEN 'Married-spouse-absent' WHEN u4 < 0.995 THEN 'Widowed' ELSE 'Married-AF-spouse' END
                    WHEN age < 65 THEN CASE WHEN u4 < 0.10 THEN 'Never-married' WHEN u4 < 0.68 THEN 'Married-civ-spouse' WHEN u4 < 0.86 THEN 'Divorced' WHEN u4 < 0.90 THEN 'Separated' WHEN u4 < 0.93 THEN 'Married-spouse-absent' ELSE 'Widowed' END
                    ELSE CASE WHEN u4 < 0.05 THEN 'Never-married' WHEN u4 < 0.55 THEN 'Married-civ-spouse' WHEN u4 < 0.65 THEN 'Divorced' ELSE 'Widowed' END
                END AS marital_status,
                CASE
                    WHEN u5 < 0.002 THEN 'Preschool' WHEN u5 < 0.007 THEN '1st-4th' WHEN u5 < 0.017 THEN '5th-6th'
                    WHEN u5 < 0.037 THEN '7th-8th' WHEN u5 < 0.053 THEN '9th' WHEN u5 < 0.081 THEN '10th'
                    WHEN u5 < 0.117 THEN '11th' WHEN u5 < 0.130 THEN '12th' WHEN u5 < 0.455 THEN 'HS-grad'
                    WHEN u5 < 0.675 THEN 'Some-college' WHEN u5 < 0.717 THEN 'Assoc-voc' WHEN u5 < 0.750 THEN 'Assoc-acdm'
                    WHEN u5 < 0.915 THEN 'Bachelors' WHEN u5 < 0.969 THEN 'Masters' WHEN u5 < 0.987 THEN 'Prof-school'
                    ELSE 'Doctorate'
                END AS education
            FROM (
                SELECT *,
                    CAST(17 + floor(73 * pow(u1, 2.3)) AS INTEGER) AS age,
                    CASE WHEN u2 < 0.67 THEN 'Male' ELSE 'Female' END AS sex,
                    CASE WHEN u3 < 0.855 THEN 'White' WHEN u3 < 0.951 THEN 'Black' WHEN u3 < 0.982 THEN 'Asian-Pac-Islander'
                         WHEN u3 < 0.992 THEN 'Amer-Indian-Eskimo' ELSE 'Other' END AS race
                FROM (
                    SELECT
                        i AS person_id,
                        (hash(i, $seed, 1) % 1000003) / 1000003.0 AS u1,
                        (hash(i, $seed, 2) % 1000003) / 1000003.0 AS u2,
                        (hash(i, $seed, 3) % 1000003) / 1000003.0 AS u3,
                        (hash(i, $seed, 4) % 1000003) / 1000003.0 AS u4,
                        (hash(i, $seed, 5) % 1000003) / 1000003.0 AS u5,
                        (hash(i, $seed, 6) % 1000003) / 1000003.0 AS u6,
                        (hash(i, $seed, 7) % 1000003) / 1000003.0 AS u7,
                        (hash(i, $seed, 8) % 1000003) / 1000003.0 AS u8,
                        ((hash(i, $seed, 9) % 1000003) + 1) / 1000004.0 AS u9,
                        (hash(i, $seed, 10) % 1000003) / 1000003.0 AS u10,
                        (hash(i, $seed, 11) % 1000003) / 1000003.0 AS u11
                    FROM range(CAST($rows AS BIGINT)) AS t(i)
                )
            )
        )
    )
)
