/// Numbered schema migrations; each runs once, in order, and those a store lacks run in one transaction.
///
/// The store records applied migrations in `schema_migrations`. A store
/// written by a newer iaprecon (a migration number this build does not know)
/// is refused rather than guessed at.
public enum Schema {
    /// Each migration's text is frozen once released: a store migrated by it must mean the same
    /// thing to every later build, so it never derives from code that changes (a table's current
    /// columns, a helper's SQL). `SchemaTests` compares each with its shipped copy.
    public static let migrations: [(id: Int, sql: String)] = [
        (1, """
            CREATE TABLE files (
              file_id INTEGER PRIMARY KEY,
              path TEXT NOT NULL UNIQUE,
              source TEXT NOT NULL,
              content_hash TEXT NOT NULL,
              bytes INTEGER NOT NULL,
              lines_read INTEGER NOT NULL,
              accepted INTEGER NOT NULL,
              rejected INTEGER NOT NULL,
              blank INTEGER NOT NULL,
              ignored INTEGER NOT NULL,
              ingested_ms INTEGER NOT NULL
            );
            CREATE TABLE rejects (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              reason TEXT NOT NULL,
              text TEXT NOT NULL,
              PRIMARY KEY (file_id, line)
            ) WITHOUT ROWID;
            CREATE TABLE runs (
              run_id INTEGER PRIMARY KEY,
              command TEXT NOT NULL,
              started_ms INTEGER NOT NULL,
              ended_ms INTEGER,
              status TEXT NOT NULL,
              as_of_ms INTEGER,
              lines_read INTEGER,
              findings INTEGER,
              message TEXT
            );CREATE TABLE raw_server__orders (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              ts_ms INTEGER,
              order_id TEXT,
              user_id TEXT,
              product_id TEXT,
              price TEXT,
              currency TEXT,
              storefront TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            CREATE TABLE raw_server__deliveries (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              ts_ms INTEGER,
              user_id TEXT,
              transaction_id TEXT,
              product_id TEXT,
              order_id TEXT,
              quantity_n INTEGER,
              delivery_id TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            CREATE TABLE raw_server__revocations (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              ts_ms INTEGER,
              user_id TEXT,
              transaction_id TEXT,
              reason TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            CREATE TABLE raw_receipts__verifications (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              received_ms INTEGER,
              user_id TEXT,
              order_id TEXT,
              transaction_id TEXT,
              status_n INTEGER,
              environment TEXT,
              bundle_id TEXT,
              shape TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            CREATE TABLE raw_apple__transactions (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              origin TEXT,
              event_ms INTEGER,
              user_id TEXT,
              claimed_order_id TEXT,
              transaction_id TEXT,
              original_transaction_id TEXT,
              product_id TEXT,
              purchase_ms INTEGER,
              expires_ms INTEGER,
              revocation_ms INTEGER,
              revocation_reason TEXT,
              revocation_type TEXT,
              revocation_percentage_n INTEGER,
              price_milli_n INTEGER,
              currency TEXT,
              storefront TEXT,
              environment TEXT,
              app_account_token TEXT,
              type TEXT,
              quantity_n INTEGER,
              ownership TEXT,
              subscription_group TEXT,
              notification_uuid TEXT,
              notification_type TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            CREATE TABLE raw_notifications__notifications (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              notification_uuid TEXT,
              notification_type TEXT,
              subtype TEXT,
              signed_ms INTEGER,
              environment TEXT,
              version TEXT,
              transaction_id TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            CREATE TABLE raw_registrations__users (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              ts_ms INTEGER,
              user_id TEXT,
              method TEXT,
              idfv TEXT,
              idfa TEXT,
              appsflyer_id TEXT,
              country TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            CREATE TABLE raw_mmp__events (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              event_wall_ms INTEGER,
              install_wall_ms INTEGER,
              event_name TEXT,
              media_source TEXT,
              channel TEXT,
              campaign TEXT,
              campaign_id TEXT,
              adset TEXT,
              ad TEXT,
              country TEXT,
              customer_user_id TEXT,
              idfv TEXT,
              idfa TEXT,
              appsflyer_id TEXT,
              revenue TEXT,
              revenue_currency TEXT,
              revenue_usd TEXT,
              is_retargeting_n INTEGER,
              platform TEXT,
              touch_type TEXT,
              event_value_key TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            CREATE TABLE raw_spend__days (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              day TEXT,
              media_source TEXT,
              campaign TEXT,
              spend TEXT,
              currency TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            CREATE TABLE raw_catalog__products (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              product_id TEXT,
              type TEXT,
              subscription_group TEXT,
              price TEXT,
              currency TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            CREATE TABLE raw_fx__rates (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              day TEXT,
              currency TEXT,
              rate TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            CREATE INDEX raw_deliveries_by_transaction ON raw_server__deliveries(transaction_id);
            CREATE INDEX raw_deliveries_by_user ON raw_server__deliveries(user_id);
            CREATE INDEX raw_orders_by_user ON raw_server__orders(user_id);
            CREATE INDEX raw_orders_by_order ON raw_server__orders(order_id);
            CREATE INDEX raw_revocations_by_transaction ON raw_server__revocations(transaction_id);
            CREATE INDEX raw_apple_by_transaction ON raw_apple__transactions(transaction_id);
            CREATE INDEX raw_verifications_by_user ON raw_receipts__verifications(user_id);
            CREATE INDEX raw_registrations_by_user ON raw_registrations__users(user_id);
            """),
        // Normalize reads the raw tables whole, so their secondary indexes only slowed ingest;
        // lookups go to the stg/int/fct tables, which carry the indexes `history` needs.
        (2, """
            DROP INDEX raw_deliveries_by_transaction;
            DROP INDEX raw_deliveries_by_user;
            DROP INDEX raw_orders_by_user;
            DROP INDEX raw_orders_by_order;
            DROP INDEX raw_apple_by_transaction;
            DROP INDEX raw_verifications_by_user;
            CREATE INDEX raw_revocations_by_user ON raw_server__revocations(user_id);
            """),
        // Incremental nights: the keys new files touch, each file's latest event time (the as-of
        // without scanning every table) and modification time (unchanged files are not read again),
        // and the raw indexes that rebuild one key's normalized rows.
        // The first run after this migration rebuilds everything once.
        (3, """
            CREATE TABLE dirty_keys (kind TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (kind, key)) WITHOUT ROWID;
            INSERT INTO dirty_keys VALUES ('all', '');
            ALTER TABLE files ADD COLUMN latest_ms INTEGER;
            ALTER TABLE files ADD COLUMN latest_mmp_wall_ms INTEGER;
            ALTER TABLE files ADD COLUMN mtime_ns INTEGER;
            UPDATE files SET
              latest_ms = (SELECT max(m) FROM (
                SELECT max(ts_ms) AS m FROM raw_server__orders WHERE file_id = files.file_id
                UNION ALL SELECT max(ts_ms) FROM raw_server__deliveries WHERE file_id = files.file_id
                UNION ALL SELECT max(ts_ms) FROM raw_server__revocations WHERE file_id = files.file_id
                UNION ALL SELECT max(received_ms) FROM raw_receipts__verifications WHERE file_id = files.file_id
                UNION ALL SELECT max(signed_ms) FROM raw_notifications__notifications WHERE file_id = files.file_id AND version = '2'
                UNION ALL SELECT max(ts_ms) FROM raw_registrations__users WHERE file_id = files.file_id)),
              latest_mmp_wall_ms = (SELECT max(event_wall_ms) FROM raw_mmp__events WHERE file_id = files.file_id)
            WHERE 1;
            CREATE INDEX IF NOT EXISTS raw_apple_by_transaction ON raw_apple__transactions(transaction_id);
            CREATE INDEX IF NOT EXISTS raw_orders_by_order ON raw_server__orders(order_id);
            CREATE INDEX IF NOT EXISTS raw_deliveries_by_transaction ON raw_server__deliveries(transaction_id);
            CREATE INDEX IF NOT EXISTS raw_deliveries_by_delivery ON raw_server__deliveries(delivery_id) WHERE delivery_id IS NOT NULL;
            CREATE INDEX IF NOT EXISTS raw_verifications_by_transaction ON raw_receipts__verifications(transaction_id)
              WHERE transaction_id IS NOT NULL AND order_id IS NOT NULL;
            """),
        // Operations: whether each stored file was still in the input folder at the last ingest
        // (archived partitions keep their rows), the files under the input folder that match no
        // source, and per run its `--date` and exit code, so `runs` tells what ran and how it ended.
        (4, """
            ALTER TABLE files ADD COLUMN present INTEGER NOT NULL DEFAULT 1;
            CREATE TABLE ignored_files (path TEXT PRIMARY KEY) WITHOUT ROWID;
            ALTER TABLE runs ADD COLUMN partition_date TEXT;
            ALTER TABLE runs ADD COLUMN exit_code INTEGER;
            """),
        // Free trials and intro offers are priced apart (CONTRACT.md §1.2): a sighting's offer terms.
        // A delivery_id is unique within its transaction only, so nothing looks deliveries up by it.
        // Rows stored before this had no offer terms and were deduplicated by the older rule: the
        // receipt and notification files still in the input folder are read again by the next ingest
        // (no stored hash matches), and everything is rebuilt once.
        (5, """
            ALTER TABLE raw_apple__transactions ADD COLUMN offer TEXT;
            DROP INDEX IF EXISTS raw_deliveries_by_delivery;
            UPDATE files SET content_hash = 'read again for offer terms', mtime_ns = NULL WHERE source IN ('receipts', 'notifications');
            INSERT OR IGNORE INTO dirty_keys VALUES ('all', '');
            """),
        // Apple's Summary Sales Reports (CONTRACT.md §1.7), read by the tie-out with Apple.
        (6, """
            CREATE TABLE raw_apple__sales (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              day TEXT,
              product_id TEXT,
              product_type TEXT,
              units_n INTEGER,
              country TEXT,
              customer_price TEXT,
              customer_currency TEXT,
              proceeds TEXT,
              proceeds_currency TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            """),
        // The join recomputes the tie-out only for the days a night touched (ChangedKeys' `sales_day`),
        // which ingest records from now on. Every stored report day is marked once, so a report an
        // older iaprecon stored but never tied out (killed before its join) is not left out.
        (7, """
            INSERT OR IGNORE INTO dirty_keys SELECT 'sales_day', day FROM raw_apple__sales WHERE day IS NOT NULL;
            """),
        // MMP rows are kept once, with only the columns attribution reads: which rows are repeats is
        // decided in memory when attribution reads them, so the staged copies go. An install time is
        // kept on install rows only, the one place it is read.
        (8, """
            ALTER TABLE raw_mmp__events RENAME TO raw_mmp__events_wide;
            CREATE TABLE raw_mmp__events (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              event_wall_ms INTEGER,
              install_wall_ms INTEGER,
              event_name TEXT,
              media_source TEXT,
              campaign TEXT,
              customer_user_id TEXT,
              idfv TEXT,
              idfa TEXT,
              appsflyer_id TEXT,
              revenue TEXT,
              revenue_currency TEXT,
              revenue_usd TEXT,
              is_retargeting_n INTEGER,
              event_value_key TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            INSERT INTO raw_mmp__events
              SELECT file_id, line, item, event_wall_ms, CASE WHEN event_name = 'install' THEN install_wall_ms END, event_name,
                     media_source, campaign, customer_user_id, idfv, idfa, appsflyer_id, revenue, revenue_currency, revenue_usd,
                     is_retargeting_n, event_value_key
              FROM raw_mmp__events_wide;
            DROP TABLE raw_mmp__events_wide;
            DROP TABLE IF EXISTS stg_mmp__identities;
            DROP TABLE IF EXISTS stg_mmp__installs;
            DROP TABLE IF EXISTS stg_mmp__purchases;
            DROP TABLE IF EXISTS stg_mmp__links;
            DROP TABLE IF EXISTS stg_mmp__identities__next;
            DROP TABLE IF EXISTS stg_mmp__installs__next;
            DROP TABLE IF EXISTS stg_mmp__purchases__next;
            DROP TABLE IF EXISTS stg_mmp__links__next;
            DELETE FROM dirty_keys WHERE kind = 'mmp_rebuild';
            """),
        // Each user's first registration is picked as the report reads the registrations: its
        // staged copy, and normalize's list of users whose copy to redo, go. No reader looked
        // resolved transactions up by order then (orders were matched through int_orders_matched):
        // that index, under either of its alternating names, goes too. Migration 13's index of
        // matched orders has a name of its own.
        (9, """
            DROP TABLE IF EXISTS stg_registrations__first;
            DROP TABLE IF EXISTS stg_registrations__first__next;
            DROP TABLE IF EXISTS normalize__changed_registrations;
            DROP INDEX IF EXISTS int_transactions_by_order;
            DROP INDEX IF EXISTS int_transactions_by_order__2;
            """),
        // No normalized copy of the input is kept: the stage that reads transactions, orders,
        // deliveries and receipt claims normalizes them from the raw lines, and the staged tables
        // go. What a pending incremental normalize would have recorded from them first (the users,
        // orders and chains a changed transaction or order linked to, for the join to revisit) is
        // recorded here; ingest records it from now on. The tables are made first where a store
        // never had them, so each copy reads an empty one.
        (10, """
            CREATE TABLE IF NOT EXISTS stg_apple__transactions (transaction_id TEXT, original_transaction_id TEXT, app_account_token TEXT);
            CREATE TABLE IF NOT EXISTS stg_receipts__senders (transaction_id TEXT, user_id TEXT);
            CREATE TABLE IF NOT EXISTS stg_server__orders (order_id TEXT, user_id TEXT);
            CREATE TABLE IF NOT EXISTS stg_server__deliveries (transaction_id TEXT, user_id TEXT, order_id TEXT);
            CREATE TABLE IF NOT EXISTS stg_receipts__claims (order_id TEXT, transaction_id TEXT);
            CREATE TEMP TABLE changed_transactions AS SELECT key FROM dirty_keys WHERE kind = 'transaction';
            INSERT OR IGNORE INTO dirty_keys SELECT 'chain', original_transaction_id FROM stg_apple__transactions
              WHERE transaction_id IN temp.changed_transactions;
            INSERT OR IGNORE INTO dirty_keys SELECT 'order', app_account_token FROM stg_apple__transactions
              WHERE transaction_id IN temp.changed_transactions AND app_account_token IS NOT NULL;
            INSERT OR IGNORE INTO dirty_keys SELECT 'user', user_id FROM stg_receipts__senders
              WHERE transaction_id IN temp.changed_transactions;
            INSERT OR IGNORE INTO dirty_keys SELECT 'user', user_id FROM stg_server__deliveries
              WHERE transaction_id IN temp.changed_transactions;
            INSERT OR IGNORE INTO dirty_keys SELECT 'order', order_id FROM stg_server__deliveries
              WHERE transaction_id IN temp.changed_transactions AND order_id IS NOT NULL;
            INSERT OR IGNORE INTO dirty_keys SELECT 'order', order_id FROM stg_receipts__claims
              WHERE transaction_id IN temp.changed_transactions;
            INSERT OR IGNORE INTO dirty_keys SELECT 'user', user_id FROM stg_server__orders
              WHERE order_id IN (SELECT key FROM dirty_keys WHERE kind = 'order');
            DROP TABLE temp.changed_transactions;
            DROP TABLE stg_apple__transactions;
            DROP TABLE stg_receipts__senders;
            DROP TABLE stg_server__orders;
            DROP TABLE stg_server__deliveries;
            DROP TABLE stg_receipts__claims;
            DROP TABLE IF EXISTS stg_apple__refunds;
            DROP TABLE IF EXISTS stg_apple__transactions__next;
            DROP TABLE IF EXISTS stg_apple__refunds__next;
            DROP TABLE IF EXISTS stg_receipts__senders__next;
            DROP TABLE IF EXISTS stg_server__orders__next;
            DROP TABLE IF EXISTS stg_server__deliveries__next;
            DROP TABLE IF EXISTS stg_receipts__claims__next;
            DROP TABLE IF EXISTS normalize__changed_transactions;
            DROP TABLE IF EXISTS normalize__changed_orders;
            """),
        // Device-id pseudonyms are kept as bytes (the hash, then the id's last four characters), not
        // as hex and `…`; an MMP row's event value as its hash's bytes, none for an empty value. A
        // row that is not an install keeps no campaign and no IDFV or IDFA, and one that is not a
        // purchase no revenue: attribution reads them of no other row. A store kept from before
        // pseudonyms (whole ids, which have no `…`) keeps them until ingest replaces them.
        (11, """
            ALTER TABLE raw_mmp__events RENAME TO raw_mmp__events_hex;
            CREATE TABLE raw_mmp__events (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              event_wall_ms INTEGER,
              install_wall_ms INTEGER,
              event_name TEXT,
              media_source TEXT,
              campaign TEXT,
              customer_user_id TEXT,
              idfv BLOB,
              idfa BLOB,
              appsflyer_id BLOB,
              revenue TEXT,
              revenue_currency TEXT,
              revenue_usd TEXT,
              is_retargeting_n INTEGER,
              event_value_key BLOB,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            INSERT INTO raw_mmp__events
              SELECT file_id, line, item, event_wall_ms, install_wall_ms, event_name,
                     CASE WHEN event_name = 'install' THEN media_source END,
                     CASE WHEN event_name = 'install' THEN campaign END,
                     customer_user_id,
                     CASE WHEN event_name = 'install' AND substr(idfv, 33, 1) = '…'
                          THEN CAST(unhex(substr(idfv, 1, 32)) || substr(idfv, 34) AS BLOB)
                          WHEN event_name = 'install' THEN idfv END,
                     CASE WHEN event_name = 'install' AND substr(idfa, 33, 1) = '…'
                          THEN CAST(unhex(substr(idfa, 1, 32)) || substr(idfa, 34) AS BLOB)
                          WHEN event_name = 'install' THEN idfa END,
                     CASE WHEN substr(appsflyer_id, 33, 1) = '…'
                          THEN CAST(unhex(substr(appsflyer_id, 1, 32)) || substr(appsflyer_id, 34) AS BLOB)
                          ELSE appsflyer_id END,
                     CASE WHEN event_name = 'af_purchase' THEN revenue END,
                     CASE WHEN event_name = 'af_purchase' THEN revenue_currency END,
                     CASE WHEN event_name = 'af_purchase' THEN revenue_usd END,
                     is_retargeting_n,
                     CASE WHEN typeof(event_value_key) != 'text' THEN event_value_key
                          WHEN event_value_key != 'cbf29ce484222325' THEN unhex(event_value_key) END
              FROM raw_mmp__events_hex;
            DROP TABLE raw_mmp__events_hex;
            ALTER TABLE raw_registrations__users RENAME TO raw_registrations__users_hex;
            CREATE TABLE raw_registrations__users (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              ts_ms INTEGER,
              user_id TEXT,
              method TEXT,
              idfv BLOB,
              idfa BLOB,
              appsflyer_id BLOB,
              country TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            INSERT INTO raw_registrations__users
              SELECT file_id, line, item, ts_ms, user_id, method,
                     CASE WHEN substr(idfv, 33, 1) = '…'
                          THEN CAST(unhex(substr(idfv, 1, 32)) || substr(idfv, 34) AS BLOB)
                          ELSE idfv END,
                     CASE WHEN substr(idfa, 33, 1) = '…'
                          THEN CAST(unhex(substr(idfa, 1, 32)) || substr(idfa, 34) AS BLOB)
                          ELSE idfa END,
                     CASE WHEN substr(appsflyer_id, 33, 1) = '…'
                          THEN CAST(unhex(substr(appsflyer_id, 1, 32)) || substr(appsflyer_id, 34) AS BLOB)
                          ELSE appsflyer_id END,
                     country
              FROM raw_registrations__users_hex;
            DROP TABLE raw_registrations__users_hex;
            CREATE INDEX raw_registrations_by_user ON raw_registrations__users(user_id);
            """),
        // Each user's install names its line by file id and line number, not as `path:line` text.
        // The report writes every user's row anew into the table it makes again.
        (12, """
            DROP TABLE IF EXISTS fct_user_installs;
            """),
        // Each order's match is kept once, on the resolved transaction it was matched to: the
        // table of matched orders, which held every match a second time, goes with its key and
        // whatever a killed rebuild left of it. The next join rebuilds the results in full, with
        // the index that finds an order's transaction (until then `report` refuses them as an
        // older iaprecon's).
        (13, """
            DROP INDEX IF EXISTS int_orders_key;
            DROP TABLE IF EXISTS int_orders_matched;
            DROP TABLE IF EXISTS int_orders_matched__next;
            INSERT OR IGNORE INTO dirty_keys VALUES ('all', '');
            """),
        // Apple sightings keep their enumerated columns as small integer codes (`TransactionOrigin`,
        // `AppleCodes`): origin always, and Apple's environment, product type, ownership and
        // notification type when the value is one this build lists; any other value stays the text
        // Apple sent. A column declared TEXT would turn a code back into text, so the table is made
        // anew with those columns untyped (integers and texts kept apart; origin, ours, INTEGER), and
        // its rows copied across, their values coded as ingest codes them. Its raw indexes go with the
        // old table and are built again. What the rows mean is unchanged: nothing is rebuilt.
        (14, """
            ALTER TABLE raw_apple__transactions RENAME TO raw_apple__transactions_text;
            CREATE TABLE raw_apple__transactions (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              origin INTEGER,
              event_ms INTEGER,
              user_id TEXT,
              claimed_order_id TEXT,
              transaction_id TEXT,
              original_transaction_id TEXT,
              product_id TEXT,
              purchase_ms INTEGER,
              expires_ms INTEGER,
              revocation_ms INTEGER,
              revocation_reason TEXT,
              revocation_type TEXT,
              revocation_percentage_n INTEGER,
              price_milli_n INTEGER,
              currency TEXT,
              storefront TEXT,
              environment,
              app_account_token TEXT,
              type,
              quantity_n INTEGER,
              ownership,
              subscription_group TEXT,
              notification_uuid TEXT,
              notification_type,
              offer TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            INSERT INTO raw_apple__transactions
              SELECT file_id, line, item,
                     CASE origin WHEN 'receipt' THEN 1 WHEN 'v2' THEN 2 WHEN 'notification' THEN 3 ELSE origin END,
                     event_ms, user_id, claimed_order_id, transaction_id, original_transaction_id, product_id, purchase_ms,
                     expires_ms, revocation_ms, revocation_reason, revocation_type, revocation_percentage_n, price_milli_n,
                     currency, storefront,
                     CASE environment
                       WHEN 'Production' THEN 1 WHEN 'Sandbox' THEN 2 WHEN 'PROD' THEN 3 WHEN 'Xcode' THEN 4
                       WHEN 'LocalTesting' THEN 5
                       ELSE environment END,
                     app_account_token,
                     CASE type
                       WHEN 'Auto-Renewable Subscription' THEN 1 WHEN 'Non-Consumable' THEN 2 WHEN 'Consumable' THEN 3
                       WHEN 'Non-Renewing Subscription' THEN 4
                       ELSE type END,
                     quantity_n,
                     CASE ownership WHEN 'PURCHASED' THEN 1 WHEN 'FAMILY_SHARED' THEN 2 ELSE ownership END,
                     subscription_group, notification_uuid,
                     CASE notification_type
                       WHEN 'CONSUMPTION_REQUEST' THEN 1 WHEN 'DID_CHANGE_RENEWAL_PREF' THEN 2
                       WHEN 'DID_CHANGE_RENEWAL_STATUS' THEN 3 WHEN 'DID_FAIL_TO_RENEW' THEN 4 WHEN 'DID_RENEW' THEN 5
                       WHEN 'EXPIRED' THEN 6 WHEN 'EXTERNAL_PURCHASE_TOKEN' THEN 7 WHEN 'GRACE_PERIOD_EXPIRED' THEN 8
                       WHEN 'OFFER_REDEEMED' THEN 9 WHEN 'ONE_TIME_CHARGE' THEN 10 WHEN 'PRICE_INCREASE' THEN 11
                       WHEN 'REFUND' THEN 12 WHEN 'REFUND_DECLINED' THEN 13 WHEN 'REFUND_REVERSED' THEN 14
                       WHEN 'RENEWAL_EXTENDED' THEN 15 WHEN 'RENEWAL_EXTENSION' THEN 16 WHEN 'REVOKE' THEN 17
                       WHEN 'SUBSCRIBED' THEN 18 WHEN 'TEST' THEN 19 WHEN 'CANCEL' THEN 20 WHEN 'DID_RECOVER' THEN 21
                       WHEN 'INITIAL_BUY' THEN 22 WHEN 'INTERACTIVE_RENEWAL' THEN 23 WHEN 'PRICE_INCREASE_CONSENT' THEN 24
                       WHEN 'RENEWAL' THEN 25
                       ELSE notification_type END,
                     offer
              FROM raw_apple__transactions_text;
            DROP TABLE raw_apple__transactions_text;
            CREATE INDEX IF NOT EXISTS raw_apple_by_transaction ON raw_apple__transactions(transaction_id);
            CREATE INDEX IF NOT EXISTS raw_apple_by_original ON raw_apple__transactions(original_transaction_id)
              WHERE original_transaction_id != transaction_id;
            CREATE INDEX IF NOT EXISTS raw_apple_by_token ON raw_apple__transactions(app_account_token) WHERE app_account_token IS NOT NULL;
            CREATE INDEX IF NOT EXISTS raw_apple_by_user ON raw_apple__transactions(user_id) WHERE user_id IS NOT NULL;
            """),
        // Each tie-out row keeps how many verified purchases and refunds its units add up, and the
        // storefront-less row its purchases apart from its refunds, so that a night adds its
        // changes to a day instead of counting the day again. The table is made anew with them
        // (a store without it gets it too) and its rows copied across; the next join rebuilds the
        // results in full and ties out every day, filling them. Until then the rows read as before.
        (15, """
            CREATE TABLE IF NOT EXISTS fct_apple_tieout (
              day TEXT NOT NULL, product_id TEXT NOT NULL, country TEXT NOT NULL, apple_units INTEGER NOT NULL,
              verified_units INTEGER NOT NULL, customer_price TEXT, customer_currency TEXT, proceeds TEXT, proceeds_currency TEXT,
              PRIMARY KEY (day, product_id, country)
            ) WITHOUT ROWID;
            ALTER TABLE fct_apple_tieout RENAME TO fct_apple_tieout_uncounted;
            CREATE TABLE fct_apple_tieout (
              day TEXT NOT NULL, product_id TEXT NOT NULL, country TEXT NOT NULL, apple_units INTEGER NOT NULL,
              verified_units INTEGER NOT NULL, customer_price TEXT, customer_currency TEXT, proceeds TEXT, proceeds_currency TEXT,
              verified_changes INTEGER NOT NULL DEFAULT 0, unplaced_purchases INTEGER NOT NULL DEFAULT 0,
              PRIMARY KEY (day, product_id, country)
            ) WITHOUT ROWID;
            INSERT INTO fct_apple_tieout (
              day, product_id, country, apple_units, verified_units, customer_price, customer_currency, proceeds, proceeds_currency)
              SELECT day, product_id, country, apple_units, verified_units, customer_price, customer_currency, proceeds, proceeds_currency
              FROM fct_apple_tieout_uncounted;
            DROP TABLE fct_apple_tieout_uncounted;
            INSERT OR IGNORE INTO dirty_keys VALUES ('all', '');
            """),
        // What each join changed of the rows transactions.csv shows, and which transactions.csv the
        // last report wrote from which join: a night's report rewrites only the changed rows. A
        // store without them has its next transactions.csv written whole.
        (16, """
            DROP TABLE IF EXISTS int_transaction_changes;
            CREATE TABLE int_transaction_changes (
              join_number INTEGER NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (join_number, kind, id)
            ) WITHOUT ROWID;
            DROP TABLE IF EXISTS fct_transactions_file;
            CREATE TABLE fct_transactions_file (
              join_number INTEGER NOT NULL, settings TEXT NOT NULL, path TEXT NOT NULL, device INTEGER NOT NULL,
              inode INTEGER NOT NULL, bytes INTEGER NOT NULL, modified_ns INTEGER NOT NULL
            );
            """),
        // An MMP event that is neither an install nor a purchase is never a repeat of one, and all
        // attribution reads of it is the ids that link a user: it keeps its name and its event
        // value's hash no more. What the store knew of a user's logins and levels goes with them.
        // A purchase's revenue and currency are read only when it has no revenue in USD.
        (17, """
            UPDATE raw_mmp__events SET event_name = NULL, event_value_key = NULL
              WHERE event_name IS NOT NULL AND event_name NOT IN ('install', 'af_purchase');
            UPDATE raw_mmp__events SET revenue = NULL, revenue_currency = NULL
              WHERE revenue_usd IS NOT NULL AND (revenue IS NOT NULL OR revenue_currency IS NOT NULL);
            """),
        // A notification keeps its signing time and version (the as-of); only a consumption request
        // keeps its uuid, type and transaction too, which its answer names. The transactions a
        // notification carries are Apple's sightings, kept whole.
        (18, """
            UPDATE raw_notifications__notifications
              SET notification_uuid = NULL, notification_type = NULL, subtype = NULL, environment = NULL, transaction_id = NULL
              WHERE notification_type IS NOT 'CONSUMPTION_REQUEST'
                AND (notification_uuid IS NOT NULL OR notification_type IS NOT NULL OR subtype IS NOT NULL
                     OR environment IS NOT NULL OR transaction_id IS NOT NULL);
            """),
        // What each MMP file counts for attribution, packed (`MMPSegment`), so that a night's report
        // reads the rows of the files that changed, not every file's. A segment names the schema
        // version it was made under: a later migration's store counts every file again once.
        (19, """
            DROP TABLE IF EXISTS fct_mmp_segments;
            CREATE TABLE fct_mmp_segments (
              file_id INTEGER PRIMARY KEY REFERENCES files(file_id) ON DELETE CASCADE,
              chain BLOB NOT NULL,
              data BLOB NOT NULL
            );
            """),
        // A Sales Report's rows of the app itself now keep the day they cover, which the tie-out
        // compares too: the apple/ files still in the input folder are read again by the next
        // ingest (no stored hash matches), which marks their days for the join.
        (20, """
            UPDATE files SET content_hash = 'read again for the days reports cover', mtime_ns = NULL WHERE source = 'apple';
            """),
        // A receipt item an upgrade cancelled (`is_upgraded`) was kept as refunded. The receipts and
        // notifications files holding a cancellation, if still in the input folder, are read again by
        // the next ingest (no stored hash matches), which keeps an upgrade's as the end of its period.
        (21, """
            UPDATE files SET content_hash = 'read again for upgrades', mtime_ns = NULL
              WHERE source IN ('receipts', 'notifications')
                AND file_id IN (SELECT DISTINCT file_id FROM raw_apple__transactions WHERE revocation_ms IS NOT NULL);
            """),
        // A notification keeps the app it is about, which `summary.json` lists with the receipts' (a
        // feed of two apps' notifications is as worth a warning as their receipts). Notifications
        // ingested before have none: their files are not read again for it. The table is made anew
        // rather than given a column, which could not run again on a store that has it.
        (22, """
            ALTER TABLE raw_notifications__notifications RENAME TO raw_notifications__notifications_21;
            CREATE TABLE raw_notifications__notifications (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              notification_uuid TEXT,
              notification_type TEXT,
              subtype TEXT,
              signed_ms INTEGER,
              environment TEXT,
              version TEXT,
              transaction_id TEXT,
              bundle_id TEXT,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            INSERT INTO raw_notifications__notifications
                (file_id, line, item, notification_uuid, notification_type, subtype, signed_ms, environment, version, transaction_id)
              SELECT file_id, line, item, notification_uuid, notification_type, subtype, signed_ms, environment, version, transaction_id
              FROM raw_notifications__notifications_21;
            DROP TABLE raw_notifications__notifications_21;
            """),
        // The app of a V2 transaction whose line names another (`AppleTransaction.bundleApartFromLine`),
        // which `summary.json` lists with the lines' apps; a row only where they differ, so no column
        // of every sighting. Lines ingested before keep only their own app: their files are not read
        // again for it.
        (23, """
            DROP TABLE IF EXISTS raw_apple__transaction_bundles;
            CREATE TABLE raw_apple__transaction_bundles (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              bundle_id TEXT NOT NULL,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            """),
        // The rules besides the clock that judged a file's lines (`LineRules.readWith`): a run with
        // other rules reads the file again, as a fresh store would read it. Files stored before have
        // none, and keep their rows until they change. A table beside `files`, not a column of it,
        // so that the migration can run again on a store that has it.
        (24, """
            DROP TABLE IF EXISTS file_rules;
            CREATE TABLE file_rules (
              file_id INTEGER PRIMARY KEY REFERENCES files(file_id) ON DELETE CASCADE,
              read_with TEXT NOT NULL
            );
            """),
        // The clocks by which the chains of a file's JWS without a signing time, judged at the run's
        // clock, keep their verdicts (`ClockJudgedChains`; NULL is no bound on that side): a run by
        // another clock reads the file again. A file stored before was judged by a clock the store
        // does not know: the notifications files that may hold such a JWS (a V2 notification with no
        // signing time, or a line rejected for its certificate's dates or its signature), read with
        // signatures checked, are read again by the next ingest if still in the folder. Apple's own
        // notifications carry a signedDate, so their files are not.
        (25, """
            DROP TABLE IF EXISTS file_clock_span;
            CREATE TABLE file_clock_span (
              file_id INTEGER PRIMARY KEY REFERENCES files(file_id) ON DELETE CASCADE,
              from_ms INTEGER,
              to_ms INTEGER
            );
            UPDATE files SET content_hash = 'read again for chains judged at the clock', mtime_ns = NULL
              WHERE source = 'notifications'
                AND file_id NOT IN (SELECT file_id FROM file_rules WHERE read_with LIKE '%signatures unchecked')
                AND (file_id IN (SELECT file_id FROM raw_notifications__notifications WHERE version = '2' AND signed_ms IS NULL)
                  OR file_id IN (SELECT file_id FROM rejects
                                 WHERE reason LIKE 'certificate expired at signing time in %' OR reason LIKE 'bad signature in %'));
            """),
        // Apple's transactions carry at most a million units (`AmountRange.maximumQuantity`), as a
        // delivery does: a receipts or notifications file an older iaprecon kept with more in one is
        // read again by the next ingest, which rejects that line, instead of its units summed (a count
        // near the largest integer stops every report).
        (26, """
            UPDATE files SET content_hash = 'read again for quantities', mtime_ns = NULL
              WHERE source IN ('receipts', 'notifications')
                AND file_id IN (SELECT DISTINCT file_id FROM raw_apple__transactions WHERE quantity_n > 1000000);
            """),
        // A currency not written as ISO 4217's three capital letters (one an MMP purchase's revenue
        // is converted by, for the MMP) and a spend row naming no media source (`None`, `N/A`, ...)
        // are rejected lines now; an older build kept them, and showed them only as amounts without
        // an fx rate, or as organic spend. An MMP row's revenue cells are read only on a purchase,
        // and its Install Time only on an install, where an older build rejected any row for them.
        // An event time before the App Store opened (2008-07-10; most often epoch seconds written
        // as milliseconds) is a rejected line now; an MMP time is kept as its wall clock, up to 14
        // hours ahead of UTC. The next ingest reads again the files that hold such a line, if still
        // in the folder, as a fresh store reads them. A refund's type is now its typed sighting's,
        // whichever line was read last (`EffectiveRefund.resolve`): results decided otherwise are
        // rebuilt once.
        (27, """
            UPDATE files SET content_hash = 'read again for currencies and media sources', mtime_ns = NULL
              WHERE file_id IN (SELECT file_id FROM raw_server__orders WHERE currency NOT GLOB '[A-Z][A-Z][A-Z]')
                 OR file_id IN (SELECT file_id FROM raw_apple__transactions WHERE currency NOT GLOB '[A-Z][A-Z][A-Z]')
                 OR file_id IN (SELECT file_id FROM raw_mmp__events WHERE revenue IS NOT NULL AND revenue_currency NOT GLOB '[A-Z][A-Z][A-Z]')
                 OR file_id IN (SELECT file_id FROM raw_spend__days
                                WHERE currency NOT GLOB '[A-Z][A-Z][A-Z]' OR trim(media_source) IN ('', 'None', 'N/A', 'null', 'NULL'))
                 OR file_id IN (SELECT file_id FROM raw_catalog__products WHERE currency NOT GLOB '[A-Z][A-Z][A-Z]')
                 OR file_id IN (SELECT file_id FROM raw_fx__rates WHERE currency NOT GLOB '[A-Z][A-Z][A-Z]')
                 OR file_id IN (SELECT file_id FROM rejects
                                WHERE (reason LIKE '%''Event Revenue%' OR reason LIKE '%''Install Time''%')
                                  AND file_id IN (SELECT file_id FROM files WHERE source = 'attribution'))
                 OR file_id IN (SELECT file_id FROM raw_server__orders WHERE ts_ms < 1215648000000)
                 OR file_id IN (SELECT file_id FROM raw_server__deliveries WHERE ts_ms < 1215648000000)
                 OR file_id IN (SELECT file_id FROM raw_server__revocations WHERE ts_ms < 1215648000000)
                 OR file_id IN (SELECT file_id FROM raw_receipts__verifications WHERE received_ms < 1215648000000)
                 OR file_id IN (SELECT file_id FROM raw_apple__transactions WHERE event_ms < 1215648000000)
                 OR file_id IN (SELECT file_id FROM raw_notifications__notifications WHERE signed_ms < 1215648000000)
                 OR file_id IN (SELECT file_id FROM raw_registrations__users WHERE ts_ms < 1215648000000)
                 OR file_id IN (SELECT file_id FROM raw_mmp__events WHERE event_wall_ms < 1215698400000);
            INSERT OR IGNORE INTO dirty_keys VALUES ('all', '');
            """),
        // A transaction's expiry is now the latest any of its sightings gives (Apple extends one with
        // `RENEWAL_EXTENDED`), where an older build took the first file's: a store holding a
        // transaction seen with two expiries has its results rebuilt once.
        (28, """
            INSERT OR IGNORE INTO dirty_keys SELECT 'all', '' WHERE EXISTS (
              SELECT 1 FROM raw_apple__transactions WHERE expires_ms IS NOT NULL
              GROUP BY transaction_id HAVING min(expires_ms) != max(expires_ms));
            """),
        // Dates inside Apple's payloads: a Production transaction (environment Production or PROD, or
        // none given) whose purchase or refund date lies before the App Store
        // opened (2008-07-10), and a refund time more than a day after the run's clock, are rejected
        // lines now; an older iaprecon kept them, as revenue of a day in year 0 or 1970, or a refund
        // yet to come. The next ingest reads again, if still in the folder, the receipts and
        // notifications files that hold such a purchase or refund date, or a refund later than the
        // store's latest event time (the run's clock then judges it), as a fresh store reads them.
        // An upgrade's cancellation date is not stored as such: a file that holds only that keeps
        // its rows until it changes.
        (29, """
            UPDATE files SET content_hash = 'read again for dates inside Apple payloads', mtime_ns = NULL
              WHERE source IN ('receipts', 'notifications')
                AND file_id IN (SELECT file_id FROM raw_apple__transactions
                                WHERE ((purchase_ms < 1215648000000 OR revocation_ms < 1215648000000)
                                       AND (environment IS NULL OR environment IN (1, 3)))
                                   OR revocation_ms > (SELECT coalesce(max(latest_ms), 0) FROM files));
            """),
        // A V2 REFUND, REVOKE or REFUND_REVERSED that carries no transaction is a rejected line now; an
        // older iaprecon kept it, a refund that changed nothing. A notification's type is not kept
        // (migration 18), so the next ingest reads again, if still in the folder, every notifications
        // file holding a V2 notification without a transaction (a TEST's file too, to the same
        // rows), as a fresh store reads it.
        (30, """
            UPDATE files SET content_hash = 'read again for refunds without a transaction', mtime_ns = NULL
              WHERE source = 'notifications'
                AND file_id IN (SELECT n.file_id FROM raw_notifications__notifications n
                                WHERE n.version = '2' AND NOT EXISTS (
                                  SELECT 1 FROM raw_apple__transactions t WHERE t.file_id = n.file_id AND t.line = n.line));
            """),
        // Every V2 type Apple sends with its transaction (a DID_RENEW, a ONE_TIME_CHARGE, a
        // CONSUMPTION_REQUEST, ...) is a rejected line now without one, not the refunds alone; a store
        // migration 30 read again kept such a line. The store still cannot tell a TEST from them, so
        // the next ingest reads again the same files migration 30 chose, as a fresh store reads them.
        (31, """
            UPDATE files SET content_hash = 'read again for notifications without a transaction', mtime_ns = NULL
              WHERE source = 'notifications'
                AND file_id IN (SELECT n.file_id FROM raw_notifications__notifications n
                                WHERE n.version = '2' AND NOT EXISTS (
                                  SELECT 1 FROM raw_apple__transactions t WHERE t.file_id = n.file_id AND t.line = n.line));
            """),
        // The Sales Report files whose rows of a day repeat or overlap an earlier file's, kept with the
        // tie-out of the day (`AppleTieOutStore.replace`), so every report page names them while they
        // hold. An older iaprecon warned of them only on the night it tied their day out: every stored
        // report day is marked, so the next join ties each out again and fills the table without a
        // full rebuild.
        (32, """
            DROP TABLE IF EXISTS fct_apple_report_overlaps;
            CREATE TABLE fct_apple_report_overlaps (
              day TEXT NOT NULL,
              path TEXT NOT NULL,
              earlier_path TEXT NOT NULL,
              kind TEXT NOT NULL,
              PRIMARY KEY (day, path)
            ) WITHOUT ROWID;
            INSERT OR IGNORE INTO dirty_keys SELECT 'sales_day', day FROM raw_apple__sales WHERE day IS NOT NULL;
            """),
        // The Sales Report files whose lines give a tie-out row proceeds in two currencies, kept with
        // the tie-out of the day (`AppleTieOutStore.replace`), so every report page names them. An
        // older iaprecon named them only on stderr, the night it tied their day out. And a file that
        // overlaps two earlier reports of a day is kept against each of them, not the first only: its
        // key takes the earlier file. Every stored report day is marked, so the next join ties each
        // out again and fills both tables without reading a file again or a full rebuild.
        (33, """
            DROP TABLE IF EXISTS fct_apple_report_overlaps;
            CREATE TABLE fct_apple_report_overlaps (
              day TEXT NOT NULL,
              path TEXT NOT NULL,
              earlier_path TEXT NOT NULL,
              kind TEXT NOT NULL,
              PRIMARY KEY (day, path, earlier_path)
            ) WITHOUT ROWID;
            DROP TABLE IF EXISTS fct_apple_mixed_proceeds;
            CREATE TABLE fct_apple_mixed_proceeds (
              day TEXT NOT NULL,
              product_id TEXT NOT NULL,
              country TEXT NOT NULL,
              path TEXT NOT NULL,
              PRIMARY KEY (day, product_id, country, path)
            ) WITHOUT ROWID;
            INSERT OR IGNORE INTO dirty_keys SELECT 'sales_day', day FROM raw_apple__sales WHERE day IS NOT NULL;
            """),
        // A spend row or Sales Report row whose day starts more than a day after the run's clock is a
        // rejected line now (`time in the future`); an older iaprecon kept it, and it dated the as-of
        // of an input without event times. Every spend and apple/ file still in the input folder is
        // read again by the next ingest (no stored hash matches), as a fresh store reads it by that
        // run's clock, and keeps the clocks that accept its days, so an earlier clock reads it again.
        (34, """
            UPDATE files SET content_hash = 'read again for days after the clock', mtime_ns = NULL WHERE source IN ('spend', 'apple');
            """),
        // A spend or Sales Report day before the App Store opened (2008-07-10) is a rejected line now
        // (`time before the App Store opened`); an older iaprecon counted it. The files holding one, if
        // still in the input folder, are read again by the next ingest (no stored hash matches).
        (35, """
            UPDATE files SET content_hash = 'read again for days before the App Store', mtime_ns = NULL
              WHERE file_id IN (SELECT file_id FROM raw_spend__days WHERE day < '2008-07-10')
                 OR file_id IN (SELECT file_id FROM raw_apple__sales WHERE day < '2008-07-10');
            """),
        // A finding about subscription chains is linked to each chain it is about
        // (`fct_finding_chains`, which the join writes with its findings): transactions.csv and
        // `history` list a multi-Apple-ID finding on every chain it names, not the first only. An
        // older iaprecon would update the findings without their links: this migration's number
        // makes it refuse the store. Results written before have no links, and the next join
        // rebuilds them in full (`StoredJoinResults.areCurrent` asks for the table), so nothing is
        // marked here; all it drops is what a rebuild killed half-way may have left, as the next
        // join would.
        (36, """
            DROP TABLE IF EXISTS fct_finding_chains__next;
            """),
        // The SKU of the app a kept Sales Report row belongs to (`Parent Identifier`): a report
        // lists every app of the vendor account, and the summary names the apps whose rows were
        // tied out as this app's (`--app-sku` leaves the others out). Rows read before have none
        // until their report is read again. A table beside the rows, as `file_rules` is, so that
        // the migration can run again on a store that has it.
        (37, """
            DROP TABLE IF EXISTS raw_apple__sales_apps;
            CREATE TABLE raw_apple__sales_apps (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              parent_sku TEXT NOT NULL,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            """),
        // A V2 plan an upgrade replaced (`isUpgraded`) was kept as refunded at the upgrade, and a
        // receipt item bought with an offer code or a promotional offer as no offer, at the
        // catalog's full price. Neither mark is stored as such: the receipts and notifications
        // files holding a revocation, and the receipts files holding a receipt item (origin 1)
        // with no offer, if still in the input folder, are read again by the next ingest (no
        // stored hash matches), as a fresh store reads them. A family-shared copy's refund, which
        // now gives back nothing, is among those revocations: its transaction is joined again. A
        // file an earlier migration of the same upgrade marked keeps that mark.
        (38, """
            UPDATE files SET content_hash = 'read again for upgrades and offer codes', mtime_ns = NULL
              WHERE source IN ('receipts', 'notifications') AND content_hash NOT LIKE 'read again for %'
                AND file_id IN (SELECT DISTINCT file_id FROM raw_apple__transactions
                                WHERE revocation_ms IS NOT NULL OR (origin = 1 AND offer IS NULL));
            """),
        // A plan an upgrade replaced ends at the upgrade, though a sighting from before it gives the
        // plan's full period: the merge takes the latest expiry unless a sighting tells of an upgrade
        // (`AppleTransaction.upgradedMs`), kept in a row beside the few sightings that do, so no
        // column of every sighting. Rows stored before kept the upgrade only as a shorter expiry,
        // which the latest expiry hides. Which were upgrades cannot be told from the rows, so the
        // receipts and notifications files holding a subscription's sighting are read again by the
        // next ingest, as a fresh store reads them. A file an earlier migration of the same upgrade
        // marked keeps that mark.
        (39, """
            DROP TABLE IF EXISTS raw_apple__transaction_upgrades;
            CREATE TABLE raw_apple__transaction_upgrades (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              item INTEGER NOT NULL,
              upgraded_ms INTEGER NOT NULL,
              PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            UPDATE files SET content_hash = 'read again for upgrade ends', mtime_ns = NULL
              WHERE source IN ('receipts', 'notifications') AND content_hash NOT LIKE 'read again for %'
                AND file_id IN (SELECT DISTINCT file_id FROM raw_apple__transactions WHERE expires_ms IS NOT NULL);
            """),
        // A receipt line whose verification failed named an order's transaction for matching rule 2
        // (`ReceiptClaims`); it verifies nothing, and now claims nothing. Such lines' transactions and
        // orders are joined again by the next join: no file is read again.
        (40, """
            INSERT OR IGNORE INTO dirty_keys SELECT 'transaction', transaction_id FROM raw_receipts__verifications
              WHERE transaction_id IS NOT NULL AND order_id IS NOT NULL AND status_n NOT IN (0, 21006);
            INSERT OR IGNORE INTO dirty_keys SELECT 'order', order_id FROM raw_receipts__verifications
              WHERE transaction_id IS NOT NULL AND order_id IS NOT NULL AND status_n NOT IN (0, 21006);
            """),
        // The revenue figures the last published report of each zone showed (`StoredPublishedRevenue`): per day of the
        // zone and currency, the sums of revenue_daily.csv's cells, so the next report in that zone names the days it
        // restates. State 0 is what the outputs show; state 1 a report's, saved before its outputs' switch and made
        // state 0 after it.
        (41, """
            DROP TABLE IF EXISTS fct_published_revenue;
            CREATE TABLE fct_published_revenue (
              state INTEGER NOT NULL, zone TEXT NOT NULL, day INTEGER NOT NULL, reporting INTEGER NOT NULL,
              currency TEXT NOT NULL, date TEXT NOT NULL, gross TEXT NOT NULL, refunds TEXT NOT NULL, net TEXT NOT NULL,
              PRIMARY KEY (state, zone, day, reporting, currency)
            ) WITHOUT ROWID;
            DROP TABLE IF EXISTS fct_published_report;
            CREATE TABLE fct_published_report (
              state INTEGER NOT NULL, zone TEXT NOT NULL, set_path TEXT NOT NULL, currency TEXT NOT NULL,
              through_day INTEGER NOT NULL,
              PRIMARY KEY (state, zone)
            ) WITHOUT ROWID;
            """),
        // The published figures are kept per report (zone, folder, as-of day), with the order reports were first
        // published in: a night run again into its folder compared with itself and dropped its restated-revenue
        // notice. A figure is kept once per value it had, with the publications it was valid from and until (none:
        // still valid); a report is read as its zone's figures valid at its publication, up to its as-of day, so a
        // night that changes nothing adds no figure. A report's figures wait in fct_pending_revenue until its outputs'
        // switch. The per-zone figures say of no report which folder and day they were; they are dropped, and the
        // first report after this names no restated day, as after migration 41.
        (42, """
            DROP TABLE IF EXISTS fct_published_revenue;
            CREATE TABLE fct_published_revenue (
              zone TEXT NOT NULL, day INTEGER NOT NULL, reporting INTEGER NOT NULL, currency TEXT NOT NULL,
              valid_from INTEGER NOT NULL, valid_to INTEGER,
              date TEXT NOT NULL, gross TEXT NOT NULL, refunds TEXT NOT NULL, net TEXT NOT NULL,
              PRIMARY KEY (zone, day, reporting, currency, valid_from)
            ) WITHOUT ROWID;
            DROP TABLE IF EXISTS fct_pending_revenue;
            CREATE TABLE fct_pending_revenue (
              day INTEGER NOT NULL, reporting INTEGER NOT NULL, currency TEXT NOT NULL, date TEXT NOT NULL,
              gross TEXT NOT NULL, refunds TEXT NOT NULL, net TEXT NOT NULL,
              PRIMARY KEY (day, reporting, currency)
            ) WITHOUT ROWID;
            DROP TABLE IF EXISTS fct_published_report;
            CREATE TABLE fct_published_report (
              state INTEGER NOT NULL, zone TEXT NOT NULL, folder TEXT NOT NULL, through_day INTEGER NOT NULL,
              set_path TEXT NOT NULL, currency TEXT NOT NULL, first_published INTEGER NOT NULL, publication INTEGER NOT NULL,
              PRIMARY KEY (state, zone, folder, through_day)
            ) WITHOUT ROWID;
            """),
        // Each tie-out row keeps its units of purchases alone, Apple's and the verified ones, beside it: a
        // shortfall (`unverified_apple_sales`) is of purchases, and refunds are held against refunds apart.
        // Every stored report day is marked, so the next join ties each out again and fills the table
        // without reading a file again or a full rebuild.
        (43, """
            DROP TABLE IF EXISTS fct_apple_tieout_purchases;
            CREATE TABLE fct_apple_tieout_purchases (
              day TEXT NOT NULL, product_id TEXT NOT NULL, country TEXT NOT NULL,
              apple_purchases INTEGER NOT NULL, verified_purchases INTEGER NOT NULL,
              PRIMARY KEY (day, product_id, country)
            ) WITHOUT ROWID;
            INSERT OR IGNORE INTO dirty_keys SELECT 'sales_day', day FROM raw_apple__sales WHERE day IS NOT NULL;
            """),
        // A rejected line's text and reason replace IP and email addresses now (`Redaction`); an older
        // iaprecon kept them. The files whose rejects may hold one (an `@` between words, four dotted
        // numbers, a `::` or eight colon-joined groups), if still in the input folder, are read again by
        // the next ingest (no stored hash matches), which replaces their rejects.
        (44, """
            UPDATE files SET content_hash = 'read again for addresses in rejected lines', mtime_ns = NULL
              WHERE content_hash NOT LIKE 'read again for %'
                AND file_id IN (SELECT file_id FROM rejects WHERE reason || ' ' || text LIKE '%_@_%._%'
                                  OR reason || ' ' || text GLOB '*[0-9].[0-9]*.[0-9]*.[0-9]*'
                                  OR reason || ' ' || text LIKE '%::%'
                                  OR reason || ' ' || text GLOB '*[0-9a-fA-F]:[0-9a-fA-F]*:[0-9a-fA-F]*:[0-9a-fA-F]*:[0-9a-fA-F]*:[0-9a-fA-F]*:[0-9a-fA-F]*:[0-9a-fA-F]*');
            """),
        // Apple's V2 price of a transaction of several units is their total, not one unit's price; and a family member's
        // copy no app user is known for is no lost delivery, and takes no order by its token. The transactions these change
        // are joined again by the next join (Apple's price with a quantity above 1, and family-shared ones: ownership code
        // 2): no file is read again.
        (45, """
            INSERT OR IGNORE INTO dirty_keys SELECT 'transaction', transaction_id FROM raw_apple__transactions
              WHERE (price_milli_n IS NOT NULL AND quantity_n > 1) OR ownership = 2;
            """),
        // A V2 REFUND_REVERSED without signedDate is a rejected line now; an older iaprecon kept it, as a sighting of its
        // transaction and as a reversal at the transaction's revocationDate, if any. The notifications files holding one
        // (a REFUND_REVERSED sighting, type code 14, with no signing time), if still in the input folder, are read again by
        // the next ingest (no stored hash matches), which rejects the line as a fresh store does.
        // An older iaprecon also cut a rejected line's text at 300 bytes before looking for addresses, so an address
        // the cut ran through kept its first part (`jane.doe@ex…`), which no pattern of migration 44 finds: the files
        // with a cut reject (its text ends in `…`) are read again too, and the scan past the cut replaces it whole.
        (46, """
            UPDATE files SET content_hash = 'read again for reversals without signedDate', mtime_ns = NULL
              WHERE content_hash NOT LIKE 'read again for %'
                AND file_id IN (SELECT file_id FROM raw_apple__transactions WHERE notification_type = 14 AND event_ms IS NULL);
            UPDATE files SET content_hash = 'read again for addresses cut in rejected lines', mtime_ns = NULL
              WHERE content_hash NOT LIKE 'read again for %'
                AND file_id IN (SELECT file_id FROM rejects WHERE text LIKE '%…');
            """),
        // An IDFV or IDFA is kept in uppercase now (`MMPValue.uuidCase`), so a sign-up's lowercase id joins AppsFlyer's
        // uppercase one; an older iaprecon kept the pseudonym of the id as written. The registrations and MMP files
        // holding an id whose kept last four characters show a lowercase letter, if still in the input folder, are read
        // again by the next ingest (no stored hash matches), which keeps the pseudonym of the uppercase id.
        (47, """
            UPDATE files SET content_hash = 'read again for lowercase device ids', mtime_ns = NULL
              WHERE content_hash NOT LIKE 'read again for %'
                AND (file_id IN (SELECT file_id FROM raw_registrations__users
                                   WHERE CAST(substr(idfv, 17) AS TEXT) GLOB '*[a-f]*' OR CAST(substr(idfa, 17) AS TEXT) GLOB '*[a-f]*')
                     OR file_id IN (SELECT file_id FROM raw_mmp__events
                                      WHERE CAST(substr(idfv, 17) AS TEXT) GLOB '*[a-f]*' OR CAST(substr(idfa, 17) AS TEXT) GLOB '*[a-f]*'));
            """),
        // A notification signed by a chain a `--trust-root` root vouches for only as a local (Xcode) one, carrying an App
        // Store transaction (decoded, or its own JWS), is a rejected line now; an older iaprecon took that transaction, and
        // what the notification said of it, as verified. The store keeps neither which chain signed a line nor a stored
        // notification's environment, so the notifications files read with such a root, if still in the input folder, are
        // read again by the next ingest (no stored hash matches); a store that trusts Apple's root alone reads none again.
        (48, """
            UPDATE files SET content_hash = 'read again for transactions in locally signed notifications', mtime_ns = NULL
              WHERE content_hash NOT LIKE 'read again for %' AND source = 'notifications'
                AND file_id IN (SELECT file_id FROM file_rules WHERE read_with LIKE '%signatures apple+%');
            """),
        // Migration 47 tells a lowercase id by a lowercase letter in its kept last four characters, yet about one id in
        // seven ends in four digits, which show no case: a file whose lowercase ids all end so was not read again, and
        // kept pseudonyms that join no install, where a fresh store joins them. Its case is told by the file's other ids:
        // a registrations or MMP file holding an id whose kept tail shows no letter, and none whose tail shows an
        // uppercase one, if still in the input folder, is read again by the next ingest too. A file whose ids show
        // uppercase letters writes them in uppercase, and is not read again for the few of its ids that end in digits.
        (49, """
            UPDATE files SET content_hash = 'read again for lowercase device ids', mtime_ns = NULL
              WHERE content_hash NOT LIKE 'read again for %'
                AND file_id IN (
                  SELECT file_id FROM (
                      SELECT file_id, CAST(substr(idfv, 17) AS TEXT) AS tail FROM raw_registrations__users WHERE idfv IS NOT NULL
                      UNION ALL SELECT file_id, CAST(substr(idfa, 17) AS TEXT) FROM raw_registrations__users WHERE idfa IS NOT NULL
                      UNION ALL SELECT file_id, CAST(substr(idfv, 17) AS TEXT) FROM raw_mmp__events WHERE idfv IS NOT NULL
                      UNION ALL SELECT file_id, CAST(substr(idfa, 17) AS TEXT) FROM raw_mmp__events WHERE idfa IS NOT NULL)
                    GROUP BY file_id
                    HAVING max(tail <> '' AND tail NOT GLOB '*[A-Za-z]*') = 1 AND max(tail GLOB '*[A-F]*') = 0);
            """),
        // A free trial is no paid period of its chain now (an older iaprecon counted a trial on a second Apple ID as
        // paying from two at once), and a V2 offer Apple priced at 0 is a free trial (an older iaprecon counted it as
        // revenue of 0, its user a payer). The next join joins again the transactions any sighting marks a trial or
        // an offer priced 0, their chains and users with them; no file is read again.
        (50, """
            INSERT OR IGNORE INTO dirty_keys SELECT 'transaction', transaction_id FROM raw_apple__transactions
              WHERE offer = 'free_trial' OR (offer = 'intro_offer' AND price_milli_n = 0);
            """),
    ]

    public static var latestVersion: Int { migrations.last?.id ?? 0 }

    /// The store's schema is newer than this build understands.
    public struct NewerSchemaError: Error, CustomStringConvertible {
        public var found: Int
        public var description: String {
            found > Schema.latestVersion
                ? "the store has schema version \(found), newer than this iaprecon (\(Schema.latestVersion)); use a newer iaprecon"
                : "the store has migration \(found), which this iaprecon (schema version \(Schema.latestVersion)) does not know: "
                    + "another build of iaprecon wrote it; use that one, or a newer one"
        }
    }

    /// The latest migration the store has applied: behind `latestVersion` on a store an older
    /// iaprecon wrote and a read-only reader (`history`) opened, which migrates nothing.
    static func appliedVersion(_ database: Database) throws -> Int {
        Int(try database.scalar("SELECT coalesce(max(id), 0) FROM schema_migrations").integerValue)
    }

    /// The migrations of this build the store lacks, in order. By number, not by the store's latest: a build may
    /// number a migration below one another build already applied (each branch takes its number), and a store
    /// that has the higher one still lacks it.
    /// - Throws: `NewerSchemaError` when the store has applied a migration this build does not know.
    static func pending(_ database: Database) throws -> [(id: Int, sql: String)] {
        var applied = Set<Int>()
        try database.forEach("SELECT id FROM schema_migrations") { applied.insert(Int($0.int(0))) }
        if let unknown = applied.subtracting(migrations.map(\.id)).max() { throw NewerSchemaError(found: unknown) }
        return migrations.filter { !applied.contains($0.id) }
    }

    /// Applies pending migrations, all in one transaction: an upgrade stopped part-way (killed, a full disk, a
    /// damaged page) leaves the store at the version it had, which the iaprecon that wrote it still reads, and
    /// never at one between that no release wrote; the next run upgrades it whole.
    public static func migrate(_ database: Database) throws {
        try database.execute("CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY)")
        let pending = try pending(database)
        guard !pending.isEmpty else { return }
        try database.transaction {
            for migration in pending {
                try database.execute(migration.sql)
                try database.run("INSERT INTO schema_migrations (id) VALUES (?)", [.integer(Int64(migration.id))])
            }
        }
    }
}

/// The raw tables' secondary indexes. A large ingest drops them and builds them again after its
/// last file (sorting once is several times faster than keeping them up to date row by row);
/// `restore` runs before anything reads them, so an ingest killed in between costs nothing.
enum RawIndexes {
    /// Every raw secondary index of the current schema, by name: what finds one key's lines for the
    /// join, the report and `history`, which normalize them as they read (`NormalizeStage`).
    static let all: [(name: String, sql: String)] = [
        ("raw_apple_by_transaction", "ON raw_apple__transactions(transaction_id)"),
        // Renewals only: a chain's first purchase names itself, and is found by its own id.
        ("raw_apple_by_original", "ON raw_apple__transactions(original_transaction_id) WHERE original_transaction_id != transaction_id"),
        ("raw_apple_by_token", "ON raw_apple__transactions(app_account_token) WHERE app_account_token IS NOT NULL"),
        // The receipts' senders: sightings with a user are receipt and V2 lines'.
        ("raw_apple_by_user", "ON raw_apple__transactions(user_id) WHERE user_id IS NOT NULL"),
        ("raw_orders_by_order", "ON raw_server__orders(order_id)"),
        ("raw_orders_by_user", "ON raw_server__orders(user_id)"),
        ("raw_deliveries_by_transaction", "ON raw_server__deliveries(transaction_id)"),
        ("raw_deliveries_by_user", "ON raw_server__deliveries(user_id)"),
        ("raw_deliveries_by_order", "ON raw_server__deliveries(order_id) WHERE order_id IS NOT NULL"),
        // The receipt claims' (`ReceiptClaims.condition`), by either id.
        ("raw_verifications_by_transaction", "ON raw_receipts__verifications(transaction_id) WHERE transaction_id IS NOT NULL AND order_id IS NOT NULL"),
        ("raw_verifications_by_order", "ON raw_receipts__verifications(order_id) WHERE transaction_id IS NOT NULL AND order_id IS NOT NULL"),
        ("raw_revocations_by_transaction", "ON raw_server__revocations(transaction_id)"),
        ("raw_registrations_by_user", "ON raw_registrations__users(user_id)"),
        ("raw_revocations_by_user", "ON raw_server__revocations(user_id)"),
    ].map { ($0.0, "CREATE INDEX IF NOT EXISTS \($0.0) \($0.1)") }

    static func drop(_ database: Database) throws {
        for index in all { try database.execute("DROP INDEX IF EXISTS \(index.name)") }
    }
}
