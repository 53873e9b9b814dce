import psycopg2
from flask import Flask

app = Flask(__name__)
DATABASE = "postgresql://postgres:postgres@db:5432/postgres"


@app.route("/")
def index():
    with psycopg2.connect(DATABASE) as conn, conn.cursor() as cur:
        cur.execute("SELECT version()")
        return {"database": cur.fetchone()[0]}


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
