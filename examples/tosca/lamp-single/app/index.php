<?php
// The shop's front page: its products, read from the database that configure.sh names. The shop makes its
// table, with a first product, on first use.
mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
try {
    $db = new mysqli(getenv('DATABASE_HOST'), getenv('DATABASE_USER'), getenv('DATABASE_PASSWORD'),
                     getenv('DATABASE_NAME'), (int) (getenv('DATABASE_PORT') ?: 3306));
    $db->query("CREATE TABLE IF NOT EXISTS products (id INT PRIMARY KEY, name VARCHAR(80) NOT NULL)");
    $db->query("INSERT IGNORE INTO products VALUES (1, 'Teapot')");
    echo "shop is open\n";
    foreach ($db->query("SELECT name FROM products ORDER BY id") as $row) {
        echo "product: " . htmlspecialchars($row['name']) . "\n";
    }
} catch (mysqli_sql_exception $error) {
    http_response_code(503);
    echo "database unavailable: " . htmlspecialchars($error->getMessage()) . "\n";
}
