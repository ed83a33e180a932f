<?php
$db = new mysqli(getenv('DATABASE_HOST'), getenv('DATABASE_USER'), getenv('DATABASE_PASSWORD'), getenv('DATABASE_NAME'));
echo $db->connect_error ? "database unavailable" : "shop is open";
