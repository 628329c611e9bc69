"""Named schema migrations, applied in order and recorded in `_migrations`.

Add a migration by appending a decorated function; never edit one that has
shipped (stores in the wild have already applied it).
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb

Migration = Callable[[duckdb.DuckDBPyConnection], None]
MIGRATIONS: list[Migration] = []
migration = MIGRATIONS.append


@migration
def m001_traces(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        """
        CREATE TABLE sources (
            source_id VARCHAR,          -- sha256 of the file's bytes
            path VARCHAR,
            format VARCHAR,
            size_bytes BIGINT,
            ingested_at TIMESTAMP DEFAULT current_timestamp,
            n_traces INTEGER,
            n_messages BIGINT,
            n_tool_calls BIGINT,
            n_errors INTEGER,
            n_duplicates INTEGER,
            n_conflicts INTEGER
        );
        CREATE TABLE traces (
            trace_id VARCHAR,
            source_id VARCHAR,
            format VARCHAR,
            session_id VARCHAR,
            model VARCHAR,
            started_at TIMESTAMP,
            ended_at TIMESTAMP,
            outcome VARCHAR,            -- 'success' | 'failure' | NULL
            n_messages INTEGER,
            content_hash VARCHAR,       -- detects the same id with different content
            tools JSON,                 -- tool schemas the trace declared, if any
            metadata JSON
        );
        CREATE TABLE messages (
            trace_id VARCHAR,
            idx INTEGER,
            role VARCHAR,               -- system | user | assistant | tool
            content VARCHAR,
            tool_call_id VARCHAR,
            name VARCHAR,
            input_tokens INTEGER,
            output_tokens INTEGER,
            latency_ms DOUBLE,
            ts TIMESTAMP
        );
        CREATE TABLE tool_calls (
            trace_id VARCHAR,
            message_idx INTEGER,        -- the assistant message that made the call
            call_id VARCHAR,
            name VARCHAR,
            arguments JSON,
            result VARCHAR,
            result_message_idx INTEGER, -- the message that carried the result
            is_error BOOLEAN,
            exit_code INTEGER
        );
        CREATE TABLE scores (
            trace_id VARCHAR,
            name VARCHAR,
            value DOUBLE,
            label VARCHAR,
            kind VARCHAR,               -- eval | human | environment
            comment VARCHAR
        );
        CREATE TABLE ingest_errors (
            source_id VARCHAR,
            path VARCHAR,
            locator VARCHAR,            -- 'line 12', '$[3].traj[4]', 'byte 1024'
            error VARCHAR,
            raw VARCHAR,
            created_at TIMESTAMP DEFAULT current_timestamp
        );
        """
    )


@migration
def m002_failures_and_tasks(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        """
        CREATE TABLE failures (
            trace_id VARCHAR,
            detector VARCHAR,
            signature VARCHAR,          -- the evidence with numbers, ids, paths, quoted values stripped
            evidence VARCHAR,
            message_idx INTEGER,        -- the message that shows it; NULL for the whole trace
            cluster_id VARCHAR          -- = clusters.cluster_id, a hash of detector and signature
        );
        CREATE TABLE clusters (
            cluster_id VARCHAR,         -- stable across runs: md5(detector, signature), 10 hex digits
            detector VARCHAR,
            signature VARCHAR,
            n_traces INTEGER,           -- traces with at least one finding in the cluster
            n_findings INTEGER,
            n_failed INTEGER,           -- of those traces, how many failed
            n_known INTEGER,            -- of those traces, how many have a known outcome
            failure_rate DOUBLE,        -- n_failed / n_known; NULL when no outcome is known
            score DOUBLE,               -- n_traces x Wilson lower bound of failure_rate: the ranking key
            rank INTEGER,               -- 1 = most important
            example_trace_id VARCHAR
        );
        CREATE TABLE task_sets (
            task_set_id VARCHAR,
            path VARCHAR,
            created_at TIMESTAMP DEFAULT current_timestamp,
            n_tasks INTEGER,
            seed INTEGER,
            manifest JSON
        );
        CREATE TABLE tasks (
            task_id VARCHAR,
            task_set_id VARCHAR,
            split VARCHAR,
            source_trace_id VARCHAR,
            cluster_id VARCHAR,
            detector VARCHAR,
            harness VARCHAR,
            path VARCHAR,
            spec JSON
        );
        """
    )


@migration
def m010_traces_hash_on_demand(con: duckdb.DuckDBPyConnection) -> None:
    """Ingest compares a re-sent trace with the stored one by hashing both when their ids clash
    (tracegym/ingest/append.py), so a stored hash column is no longer kept."""
    con.execute("ALTER TABLE traces DROP COLUMN content_hash")


@migration
def m030_rollouts(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        """
        CREATE TABLE rollouts (
            rollout_id VARCHAR,
            run_id VARCHAR,
            task_set_id VARCHAR,
            task_id VARCHAR,
            split VARCHAR,
            harness VARCHAR,
            sample_idx INTEGER,
            seed BIGINT,                -- 63-bit, derived from the run seed, task and sample
            model VARCHAR,
            policy_version INTEGER,     -- the oldest version that wrote a token of the episode
            policy_versions INTEGER[],  -- per model turn
            sampler_id VARCHAR,
            sampling JSON,              -- temperature, top_p, top_k, max_new_tokens, max_support
            reward DOUBLE,              -- NULL when unscored (harness error) or the scorer failed
            scorer_details JSON,
            scorer_error VARCHAR,
            harness_error VARCHAR,
            stop_reason VARCHAR,
            n_turns INTEGER,
            n_tool_calls INTEGER,
            n_malformed_tool_calls INTEGER,
            n_replay_hits INTEGER,
            n_replay_misses INTEGER,
            left_recorded_path BOOLEAN,
            messages JSON,              -- the whole conversation, prompt first
            n_prompt_messages INTEGER,
            turns JSON,                 -- per turn: span in input_ids, finish reason, version, sampler, seed, latency
            input_ids INTEGER[],        -- NULL for clients without token ids
            loss_mask BOOLEAN[],        -- true on the model's own tokens
            sampler_logprobs FLOAT[],   -- aligned with input_ids; NaN where masked
            support_kind VARCHAR,       -- 'exact' | 'head' | NULL
            support_ids INTEGER[],      -- CSR over the trainable tokens, in order
            support_offsets BIGINT[],
            support_logprobs FLOAT[],
            metrics JSON,
            created_at TIMESTAMP,
            latency_s DOUBLE,
            tokens_in INTEGER,
            tokens_out INTEGER
        );
        """
    )


@migration
def m040_runs(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        """
        CREATE TABLE runs (
            run_id VARCHAR PRIMARY KEY,
            config JSON,                -- the resolved train config
            status VARCHAR,             -- running | completed | failed
            started_at TIMESTAMP,
            updated_at TIMESTAMP,
            run_dir VARCHAR,
            base_model VARCHAR,
            task_set_id VARCHAR
        );
        CREATE TABLE metrics (
            run_id VARCHAR,
            step INTEGER,               -- optimizer steps so far (warm start included) = policy version
            key VARCHAR,                -- slash-named, e.g. reward/mean, train/grad_norm, warmup/loss
            value DOUBLE
        );
        CREATE TABLE checkpoints (
            run_id VARCHAR,
            step INTEGER,
            path VARCHAR,               -- a Hugging Face model folder
            policy_version INTEGER,
            created_at TIMESTAMP
        );
        """
    )


@migration
def m050_eval(con: duckdb.DuckDBPyConnection) -> None:
    """Checkpoint evaluation (tracegym/evals/checkpoints/evaluate.py) and the `lineage` view: cluster -> tasks ->
    rollouts trained on them -> checkpoints of those runs -> eval results, one query."""
    con.execute(
        """
        CREATE TABLE evaluations (
            eval_id VARCHAR PRIMARY KEY,  -- hash of the task set and settings: the same settings reuse samples
            task_set_id VARCHAR,
            settings JSON,              -- prompt policy, harness, sampling, limits, seed, pass threshold
            created_at TIMESTAMP,
            updated_at TIMESTAMP
        );
        CREATE TABLE eval_models (
            eval_id VARCHAR,
            checkpoint_id VARCHAR,      -- identity: sha256 of the weight files, or endpoint + model name
            checkpoint VARCHAR,         -- its label in tables
            checkpoint_path VARCHAR,    -- the model folder; the endpoint URL for an API baseline
            run_id VARCHAR,             -- the training run of a trainer checkpoint; NULL otherwise
            step INTEGER,
            base_checkpoint_id VARCHAR, -- what it was compared against; NULL for the base itself
            created_at TIMESTAMP
        );
        CREATE TABLE eval_results (
            eval_id VARCHAR,
            checkpoint VARCHAR,
            checkpoint_id VARCHAR,
            checkpoint_path VARCHAR,
            run_id VARCHAR,
            step INTEGER,
            task_set_id VARCHAR,
            task_id VARCHAR,
            cluster_id VARCHAR,
            split VARCHAR,
            sample_idx INTEGER,
            seed BIGINT,                -- derived from the eval seed, the task and the sample, alike for every model
            rollout_id VARCHAR,         -- the episode in `rollouts` (run_id = eval_id)
            reward DOUBLE,              -- NULL when the harness, the policy or the scorer failed
            pass BOOLEAN,               -- reward >= the pass threshold; false when unscored
            scorer_details JSON,
            scorer_error VARCHAR,
            harness_error VARCHAR,
            stop_reason VARCHAR,
            tokens_in INTEGER,
            tokens_out INTEGER,
            latency_s DOUBLE,
            created_at TIMESTAMP,
            PRIMARY KEY (eval_id, checkpoint_id, task_id, sample_idx)
        );
        CREATE VIEW lineage AS
        WITH trained AS (
            SELECT r.run_id, r.task_set_id, r.task_id, count(*) AS train_rollouts, avg(r.reward) AS train_reward
            FROM rollouts r JOIN runs USING (run_id)
            GROUP BY r.run_id, r.task_set_id, r.task_id
        ),
        cluster_runs AS (
            SELECT DISTINCT t.cluster_id, t.task_set_id, tr.run_id
            FROM trained tr JOIN tasks t ON t.task_set_id = tr.task_set_id AND t.task_id = tr.task_id
        ),
        per_task AS (
            SELECT eval_id, checkpoint_id, task_set_id, task_id, count(*) AS samples,
                   avg(coalesce(reward, 0)) AS reward, avg(CAST(pass AS DOUBLE)) AS pass_rate
            FROM eval_results
            GROUP BY eval_id, checkpoint_id, task_set_id, task_id
        )
        SELECT c.cluster_id, c.detector, c.signature, c.rank AS cluster_rank,
               t.task_set_id, t.task_id, t.split,
               cr.run_id, coalesce(tr.train_rollouts, 0) AS train_rollouts, tr.train_reward,
               k.step AS checkpoint_step, k.path AS checkpoint_path,
               m.eval_id, m.checkpoint AS checkpoint,
               e.samples AS eval_samples, e.reward AS eval_reward, e.pass_rate AS eval_pass_rate,
               b.reward AS base_eval_reward, b.pass_rate AS base_eval_pass_rate
        FROM clusters c
        JOIN tasks t ON t.cluster_id = c.cluster_id
        LEFT JOIN cluster_runs cr ON cr.cluster_id = c.cluster_id AND cr.task_set_id = t.task_set_id
        LEFT JOIN trained tr ON tr.run_id = cr.run_id AND tr.task_set_id = t.task_set_id AND tr.task_id = t.task_id
        LEFT JOIN checkpoints k ON k.run_id = cr.run_id
        LEFT JOIN eval_models m ON m.run_id = k.run_id AND m.step = k.step
        LEFT JOIN per_task e ON e.eval_id = m.eval_id AND e.checkpoint_id = m.checkpoint_id
                            AND e.task_set_id = t.task_set_id AND e.task_id = t.task_id
        LEFT JOIN per_task b ON b.eval_id = m.eval_id AND b.checkpoint_id = m.base_checkpoint_id
                            AND b.task_set_id = t.task_set_id AND b.task_id = t.task_id;
        """
    )


@migration
def m060_detection(con: duckdb.DuckDBPyConnection) -> None:
    # Per-trace detection state (tracegym/mining/detection.py). Empty tables mean no trace has been detected:
    # the next ingest or mine detects the whole store.
    con.execute(
        """
        CREATE TABLE detected (
            trace_id VARCHAR,           -- the per-trace detectors have run on this trace
            format VARCHAR,             -- its format ('?' when unknown) and
            turns INTEGER,              -- its assistant turns, which runaway_turns compares across the store,
            has_findings BOOLEAN        -- and whether the per-trace detectors found anything in it
        );
        CREATE TABLE detection_settings (
            key VARCHAR,                -- one row: a hash of the detectors and thresholds the findings were made with,
            params JSON                 -- and those thresholds (MineConfig), which ingest detects new traces with
        );
        CREATE TABLE cluster_parts (
            cluster_id VARCHAR,         -- counts of one cluster over the traces one detection run saw;
            detector VARCHAR,           -- a cluster's counts are the sums of its parts
            signature VARCHAR,
            n_traces INTEGER,
            n_findings INTEGER,
            n_failed INTEGER,
            n_known INTEGER,
            example_trace_id VARCHAR,   -- the part's best example: failed first, then most findings, then id
            example_failed BOOLEAN,
            example_findings INTEGER
        );
        """
    )



@migration
def m070_rollout_train_use(con: duckdb.DuckDBPyConnection) -> None:
    """Which trainer step took each stored rollout and what it did with it (`Episode.train_use`: trained,
    no_signal, set_aside, stale), and the `lineage` view counting as trained only the rollouts the loss learned
    from (rows stored before this migration have no mark and count as trained, as they did). The view is restated
    in full, m050_eval's text as it shipped with the `trained` CTE changed: a shipped migration is not edited."""
    con.execute(
        """
        ALTER TABLE rollouts ADD COLUMN train_step INTEGER;
        ALTER TABLE rollouts ADD COLUMN train_use VARCHAR;
        CREATE OR REPLACE VIEW lineage AS
        WITH trained AS (
            SELECT r.run_id, r.task_set_id, r.task_id,
                   count(*) FILTER (WHERE coalesce(r.train_use, 'trained') = 'trained') AS train_rollouts,
                   avg(r.reward) FILTER (WHERE coalesce(r.train_use, 'trained') = 'trained') AS train_reward,
                   count(*) AS sampled_rollouts
            FROM rollouts r JOIN runs USING (run_id)
            GROUP BY r.run_id, r.task_set_id, r.task_id
        ),
        cluster_runs AS (
            SELECT DISTINCT t.cluster_id, t.task_set_id, tr.run_id
            FROM trained tr JOIN tasks t ON t.task_set_id = tr.task_set_id AND t.task_id = tr.task_id
        ),
        per_task AS (
            SELECT eval_id, checkpoint_id, task_set_id, task_id, count(*) AS samples,
                   avg(coalesce(reward, 0)) AS reward, avg(CAST(pass AS DOUBLE)) AS pass_rate
            FROM eval_results
            GROUP BY eval_id, checkpoint_id, task_set_id, task_id
        )
        SELECT c.cluster_id, c.detector, c.signature, c.rank AS cluster_rank,
               t.task_set_id, t.task_id, t.split,
               cr.run_id, coalesce(tr.train_rollouts, 0) AS train_rollouts, tr.train_reward,
               coalesce(tr.sampled_rollouts, 0) AS sampled_rollouts,
               k.step AS checkpoint_step, k.path AS checkpoint_path,
               m.eval_id, m.checkpoint AS checkpoint,
               e.samples AS eval_samples, e.reward AS eval_reward, e.pass_rate AS eval_pass_rate,
               b.reward AS base_eval_reward, b.pass_rate AS base_eval_pass_rate
        FROM clusters c
        JOIN tasks t ON t.cluster_id = c.cluster_id
        LEFT JOIN cluster_runs cr ON cr.cluster_id = c.cluster_id AND cr.task_set_id = t.task_set_id
        LEFT JOIN trained tr ON tr.run_id = cr.run_id AND tr.task_set_id = t.task_set_id AND tr.task_id = t.task_id
        LEFT JOIN checkpoints k ON k.run_id = cr.run_id
        LEFT JOIN eval_models m ON m.run_id = k.run_id AND m.step = k.step
        LEFT JOIN per_task e ON e.eval_id = m.eval_id AND e.checkpoint_id = m.checkpoint_id
                            AND e.task_set_id = t.task_set_id AND e.task_id = t.task_id
        LEFT JOIN per_task b ON b.eval_id = m.eval_id AND b.checkpoint_id = m.base_checkpoint_id
                            AND b.task_set_id = t.task_set_id AND b.task_id = t.task_id;
        """
    )

@migration
def m080_labels(con: duckdb.DuckDBPyConnection) -> None:
    """Outcome labels imported from files kept beside the traces (`tracegym labels import`): each import with its
    source, and each label it set, so that a trace's outcome can be traced back to a file, a column and a time."""
    con.execute(
        """
        CREATE TABLE label_imports (
            import_id VARCHAR PRIMARY KEY,  -- hash of the file's bytes and the options: a re-import is the same one
            path VARCHAR,
            sha256 VARCHAR,             -- of the file's bytes
            key_column VARCHAR,
            outcome_column VARCHAR,
            score_column VARCHAR,
            mapping JSON,               -- the --map values on top of the built-in ones
            match VARCHAR,              -- auto | trace | session: what the keys were compared with
            format VARCHAR,             -- only traces of this format were labelled; NULL for all
            first_imported_at TIMESTAMP,
            imported_at TIMESTAMP,      -- the latest import
            n_rows INTEGER,
            n_labelled INTEGER,         -- traces labelled
            n_changed INTEGER,          -- of those, how many the latest import changed
            n_unmatched INTEGER,        -- rows whose key matched no trace
            n_bad INTEGER               -- rows that could not be read, or whose value is not mapped
        );
        CREATE TABLE labels (
            import_id VARCHAR,
            trace_id VARCHAR,
            key VARCHAR,                -- the key as written in the file
            locator VARCHAR,            -- 'row 12' (CSV, header = row 1) or 'line 12' (JSONL)
            value VARCHAR,              -- the outcome value as written in the file
            outcome VARCHAR,            -- success | failure | NULL (a score only)
            score DOUBLE,
            previous_outcome VARCHAR,   -- the trace's outcome before this import first labelled it
            labelled_at TIMESTAMP,
            PRIMARY KEY (import_id, trace_id)
        );
        """
    )


@migration
def m081_mining_runs(con: duckdb.DuckDBPyConnection) -> None:
    """Each `mine failures` run with the clusters it ranked, so that a run can report what changed since an earlier
    one (tracegym/mining/feed.py): new clusters, and clusters whose share of the traces grew."""
    con.execute(
        """
        CREATE TABLE mining_runs (
            run_id VARCHAR PRIMARY KEY,
            mined_at TIMESTAMP,         -- local time, as --since reads it
            n_traces INTEGER,           -- traces in the store when it ran
            n_clusters INTEGER,
            params JSON                 -- the thresholds it mined with (MineConfig)
        );
        CREATE TABLE mining_run_clusters (
            run_id VARCHAR,
            cluster_id VARCHAR,
            detector VARCHAR,
            signature VARCHAR,
            n_traces INTEGER,
            n_failed INTEGER,
            n_known INTEGER,
            rank INTEGER
        );
        """
    )


@migration
def m082_redaction(con: duckdb.DuckDBPyConnection) -> None:
    """Redaction (tracegym/redact): what was redacted, when and how, so that `tasks generate` and `train` can
    refuse a store holding unredacted traces; and a store-wide numbering's salted digests (never the values)."""
    con.execute(
        """
        CREATE TABLE redactions (
            redaction_id VARCHAR,       -- one `ingest --redact` or `tracegym redact` run
            how VARCHAR,                -- 'ingest' | 'store'
            redacted_at TIMESTAMP,
            settings JSON,              -- rules, allow-list size, pseudonym scope, keyed or not (never the key)
            findings JSON,              -- counts per rule
            n_findings BIGINT
        );
        CREATE TABLE redacted_sources (
            source_id VARCHAR,          -- = sources.source_id / ingest_errors.source_id: this file's rows are redacted
            redaction_id VARCHAR
        );
        CREATE TABLE redaction_pseudonyms (
            label VARCHAR,              -- EMAIL, CARD, ...
            digest VARCHAR,             -- sha256(store salt + value): the store-wide numbering, without the values
            n INTEGER                   -- the placeholder is <LABEL_n>
        );
        CREATE TABLE redaction_salt (salt VARCHAR);
        """
    )


@migration
def m083_score_versions(con: duckdb.DuckDBPyConnection) -> None:
    """Reward components beside the scalar (rollouts, eval results), and score versions: `tracegym rescore`
    scores stored rollouts again with the current evals and writes each new reward as a row of
    `rollout_scores` under a new version, never over the one stored with the rollout (version 0, read through
    the `rollout_score_versions` view with the others). Rows stored before this migration have no components."""
    con.execute(
        """
        ALTER TABLE rollouts ADD COLUMN components JSON;       -- the reward's parts by name; NULL: none
        ALTER TABLE eval_results ADD COLUMN components JSON;
        CREATE TABLE score_versions (
            version INTEGER PRIMARY KEY,  -- 1, 2, ...; 0 is the score each rollout was stored with
            created_at TIMESTAMP,
            scope JSON,                 -- what was rescored: {"run_id"} / {"eval_id"} / {"task_set_id"}
            evals JSON,                 -- the evals files read, with their sha256
            rescored INTEGER,
            changed INTEGER
        );
        CREATE TABLE rollout_scores (
            rollout_id VARCHAR,
            version INTEGER,
            reward DOUBLE,              -- NULL when the scorer failed (scorer_error says why)
            scorer_details JSON,
            scorer_error VARCHAR,
            components JSON,
            PRIMARY KEY (rollout_id, version)
        );
        CREATE VIEW rollout_score_versions AS
        SELECT rollout_id, 0 AS version, reward, scorer_details, scorer_error, components FROM rollouts
        WHERE reward IS NOT NULL OR scorer_error IS NOT NULL
        UNION ALL
        SELECT rollout_id, version, reward, scorer_details, scorer_error, components FROM rollout_scores;
        """
    )


@migration
def m084_span_parts(con: duckdb.DuckDBPyConnection) -> None:
    """The spans (runs, observations, log records) each span-shaped trace was built from, so that a trace spread
    over several files or ingests is rebuilt from all its parts (tracegym/ingest/parts.py); and the pieces of JSONL
    lines cut across files, kept until the rest of the line arrives (tracegym/ingest/fragments.py)."""
    con.execute(
        """
        CREATE TABLE span_parts (
            trace_id VARCHAR,           -- the stored trace ('otel-genai:<trace id>')
            part_key VARCHAR,           -- the part's identity in its format ('span:<span id>', 'log:<digest>', …)
            seq VARCHAR,                -- sort key: parts are read in this order whatever files they came in
            doc VARCHAR,                -- the part as JSON, as the adapter reads it back
            source_id VARCHAR           -- the file that brought this version of the part
        );
        CREATE TABLE line_fragments (
            source_id VARCHAR,          -- the file the piece is in
            path VARCHAR,
            side VARCHAR,               -- lead (the file starts with it: a line's end) | trail (it ends the file:
                                        -- a line's start) | whole (the file is one piece without a newline)
            text BLOB,
            locator VARCHAR,            -- where the file's ingest reported it as a bad record ('line 7', 'file')
            alone BOOLEAN,              -- the file holds nothing but its fragments
            joined BOOLEAN              -- it is part of a complete line now, ingested as such
        );
        """
    )


@migration
def m085_pool_quarantines(con: duckdb.DuckDBPyConnection) -> None:
    """Sampler pools a training run quarantined (tracegym/training/pools/quarantine.py): the limit a pool passed and the
    evidence, so that `runs show` and the report say why a pool stopped sampling."""
    con.execute(
        """
        CREATE TABLE pool_quarantines (
            run_id VARCHAR,
            step INTEGER,               -- the step after which the pool was quarantined
            pool VARCHAR,               -- the pool's label (its name, else its precision)
            cause VARCHAR,              -- mismatch (k3 KL of its trained tokens) | error_rate
            value DOUBLE,               -- the measured value over the window
            limit_value DOUBLE,         -- the pool's limit (max_mismatch_kl | max_error_rate)
            first_step INTEGER,         -- the window: the steps whose tokens or episodes it holds
            last_step INTEGER,
            evidence DOUBLE,            -- how much the value is measured over
            evidence_unit VARCHAR,      -- tokens | episodes
            created_at TIMESTAMP
        );
        """
    )


@migration
def m086_store_changes(con: duckdb.DuckDBPyConnection) -> None:
    """Stored traces removed (`tracegym traces delete`) or replaced (`tracegym ingest --replace`): who did it,
    when, what was asked and what each table lost, so that a trace missing from the store can be accounted for."""
    con.execute(
        """
        CREATE TABLE store_changes (
            change_id VARCHAR PRIMARY KEY,
            action VARCHAR,             -- delete | replace
            changed_at TIMESTAMP,
            changed_by VARCHAR,         -- the operating-system user who ran the command
            selection JSON,             -- what was asked: {"ids"}, {"source"}, {"before"}; the file re-read
            n_traces INTEGER,
            removed JSON,               -- rows removed per table (a replaced trace's rows are then stored anew)
            removed_trace_ids JSON      -- the traces removed or replaced
        );
        """
    )


@migration
def m087_hack_warnings(con: duckdb.DuckDBPyConnection) -> None:
    """Possible reward hacking a training run warned of (tracegym/training/hack_monitor.py): a failure cluster whose
    training reward rose while its share of hollow replies rose beyond noise, with a flagged rollout to read, so
    that `runs show` and the report list them."""
    con.execute(
        """
        CREATE TABLE hack_warnings (
            run_id VARCHAR,
            step INTEGER,               -- the step that warned: the last of the later window
            cluster_id VARCHAR,         -- the failure cluster (`none` for tasks without one)
            first_step INTEGER,         -- the first step of the earlier window
            split_step INTEGER,         -- the first step of the later window
            reward_before DOUBLE,       -- episode-weighted mean training reward over each window
            reward_after DOUBLE,
            hollow_before DOUBLE,       -- share of episodes a hollow-reply detector flagged over each window
            hollow_after DOUBLE,
            episodes_before INTEGER,
            episodes_after INTEGER,
            p_value DOUBLE,             -- one-sided Fisher exact test of the flagged counts
            detector VARCHAR,           -- the detector that flagged most episodes of the later window
            example_rollout_id VARCHAR, -- a flagged rollout of the later window (`tracegym rollouts show`)
            created_at TIMESTAMP
        );
        """
    )


@migration
def m088_mlflow_pulls(con: duckdb.DuckDBPyConnection) -> None:
    """The traces `tracegym ingest mlflow+http://…` pulled from each MLflow server and experiment
    (tracegym/ingest/mlflow_pull.py), so that the next pull fetches only traces that are new or changed."""
    con.execute(
        """
        CREATE TABLE mlflow_pulls (
            server VARCHAR,             -- the tracking server's URL, as given ('http://host:5000')
            experiment VARCHAR,         -- the experiment's name
            mlflow_trace_id VARCHAR,    -- MLflow's trace id ('tr-…'; the stored trace is 'mlflow:tr-…')
            fingerprint VARCHAR,        -- digest of the trace's info (state, tags, assessments) when pulled
            source_id VARCHAR,          -- the pull's record in `sources`
            pulled_at TIMESTAMP,
            PRIMARY KEY (server, experiment, mlflow_trace_id)
        );
        """
    )


@migration
def m089_deleted_traces(con: duckdb.DuckDBPyConnection) -> None:
    """The traces `tracegym traces delete` removed, so that no later ingest, rebuild or pull stores them again
    (tracegym/ingest/append.py); `ingest --replace` of a file that holds one brings it back."""
    con.execute(
        """
        CREATE TABLE deleted_traces (
            trace_id VARCHAR PRIMARY KEY,
            change_id VARCHAR           -- the deletion's row in `store_changes`
        );
        """
    )


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply the migrations this store has not seen; return their names."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS _migrations "
        "(name VARCHAR PRIMARY KEY, applied_at TIMESTAMP DEFAULT current_timestamp)"
    )
    done = {row[0] for row in con.execute("SELECT name FROM _migrations").fetchall()}
    applied = []
    for fn in MIGRATIONS:
        if fn.__name__ in done:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            fn(con)
            con.execute("INSERT INTO _migrations (name) VALUES (?)", [fn.__name__])
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
        applied.append(fn.__name__)
    return applied

