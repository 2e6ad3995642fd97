BvariableJ`,­oC!‡zCàÙ$C ðB¼5CƒCXxàB¬ò?C¿CèølC¯+,C&Ä5Co=àB&5ºBÈœrC6_¶Bm¨CWZBÏºÆB¶BTCf
EC±v"CÁ$$C¹¼C