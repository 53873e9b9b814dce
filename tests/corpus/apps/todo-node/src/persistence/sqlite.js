const sqlite3 = require('sqlite3').verbose();
const fs = require('fs');
const location = process.env.SQLITE_DB_LOCATION || '/etc/todos/todo.db';

let db;

function init() {
    const dirName = require('path').dirname(location);
    if (!fs.existsSync(dirName)) fs.mkdirSync(dirName, { recursive: true });
    return new Promise((ok, fail) => {
        db = new sqlite3.Database(location, err => {
            if (err) return fail(err);
            db.run('CREATE TABLE IF NOT EXISTS todo_items (id varchar(36), name varchar(255), completed boolean)',
                   (err) => (err ? fail(err) : ok()));
        });
    });
}

module.exports = { init };
