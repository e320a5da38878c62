-- The demo's sample schema: a tiny shop. Loaded into the embedded MariaDB by bin/start.sh --demo.
CREATE DATABASE shop CHARACTER SET utf8mb4;
USE shop;

CREATE TABLE customers (
  id INT PRIMARY KEY AUTO_INCREMENT,
  name VARCHAR(100) NOT NULL,
  email VARCHAR(200) NOT NULL UNIQUE,
  country CHAR(2) NOT NULL
) ENGINE=InnoDB;

CREATE TABLE products (
  id INT PRIMARY KEY AUTO_INCREMENT,
  name VARCHAR(100) NOT NULL,
  price DECIMAL(10, 2) NOT NULL,
  stock INT NOT NULL
) ENGINE=InnoDB;

CREATE TABLE orders (
  id INT PRIMARY KEY AUTO_INCREMENT,
  customer_id INT NOT NULL,
  ordered_at DATETIME NOT NULL,
  FOREIGN KEY (customer_id) REFERENCES customers (id)
) ENGINE=InnoDB;

CREATE TABLE order_items (
  order_id INT NOT NULL,
  product_id INT NOT NULL,
  quantity INT NOT NULL,
  PRIMARY KEY (order_id, product_id),
  FOREIGN KEY (order_id) REFERENCES orders (id),
  FOREIGN KEY (product_id) REFERENCES products (id)
) ENGINE=InnoDB;

INSERT INTO customers (name, email, country) VALUES
  ('Ada Lovelace', 'ada@example.com', 'GB'),
  ('Grace Hopper', 'grace@example.com', 'US'),
  ('Katherine Johnson', 'katherine@example.com', 'US'),
  ('Hedy Lamarr', 'hedy@example.com', 'AT');

INSERT INTO products (name, price, stock) VALUES
  ('Espresso beans, 1 kg', 24.90, 40),
  ('Hand grinder', 79.00, 12),
  ('Moka pot', 35.50, 25),
  ('Milk jug', 14.00, 60),
  ('Cup, set of 4', 29.00, 30);

INSERT INTO orders (customer_id, ordered_at) VALUES
  (1, '2026-11-02 09:15:00'),
  (2, '2026-11-03 14:40:00'),
  (2, '2026-11-10 08:05:00'),
  (4, '2026-11-12 19:30:00');

INSERT INTO order_items (order_id, product_id, quantity) VALUES
  (1, 1, 2), (1, 3, 1),
  (2, 2, 1), (2, 1, 1),
  (3, 5, 2),
  (4, 4, 1), (4, 1, 3);
