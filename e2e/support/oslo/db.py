"""An OpenStack-like service on oslo.db, driven by e2e/oslo-db.itest.ts.

    db.py CONF_DIR [TEXT]

oslo.config reads CONF_DIR as a service reads its conf.d folder (--config-dir: every *.conf file in it),
plus OS_DATABASE__* variables from the environment. Prints one JSON line:

  without TEXT  {"ok": true, "connection": whether [database] connection is set}
  with TEXT     through oslo.db's engine facade over PyMySQL: creates the table oslo_e2e if missing, writes
                a row TEXT and reads every row: {"ok": true, "user": CURRENT_USER(), "rows": [...]}

or {"ok": false, "error": class, "message": text} (of the innermost cause: PyMySQL's, say).
"""
import json
import sys

from oslo_config import cfg
from oslo_db import options
from oslo_db.sqlalchemy import enginefacade
from sqlalchemy import text

CONF = cfg.CONF


@enginefacade.transaction_context_provider
class Context:
    pass


def write_and_read(value):
    with enginefacade.writer.using(Context()) as session:
        session.execute(
            text("CREATE TABLE IF NOT EXISTS oslo_e2e (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64))")
        )
        session.execute(text("INSERT INTO oslo_e2e (v) VALUES (:v)"), {"v": value})
    with enginefacade.reader.using(Context()) as session:
        user = session.execute(text("SELECT CURRENT_USER()")).scalar()
        rows = [r[0] for r in session.execute(text("SELECT v FROM oslo_e2e ORDER BY id"))]
    return {"ok": True, "user": user, "rows": rows}


def main():
    options.set_defaults(CONF)
    CONF(["--config-dir", sys.argv[1]], project="e2e")
    if len(sys.argv) < 3:
        return {"ok": True, "connection": CONF.database.connection is not None}
    return write_and_read(sys.argv[2])


if __name__ == "__main__":
    try:
        answer = main()
    except Exception as error:  # noqa: BLE001 - every failure is an answer
        cause = error
        while cause.__cause__ is not None:
            cause = cause.__cause__
        answer = {"ok": False, "error": type(cause).__name__, "message": str(cause)}
    print(json.dumps(answer), flush=True)
