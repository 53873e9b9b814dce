const express = require('express');
const db = require('./persistence/sqlite');

const app = express();
app.use(express.json());
app.use(express.static(__dirname + '/static'));

app.get('/items', async (req, res) => res.send(await db.getItems()));
app.post('/items', async (req, res) => res.send(await db.storeItem(req.body)));

db.init().then(() => {
    app.listen(3000, () => console.log('Listening on port 3000'));
});
