const http = require("http");
const port = Number(process.env.PORT || 3000);
http.createServer((req, res) => res.end(`notes (database ${process.env.db_host})\n`)).listen(port);
