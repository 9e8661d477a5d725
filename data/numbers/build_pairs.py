import json
from pathlib import Path
S, C, A = "same", "changed", "absent"
# (source, lang, evidence, [(claim, label, case), ...]); label: does the evidence state every number of the
# claim (same), state a different one in its place (changed), or state none of its kind (absent)?
G = [
 ("rfc", "en", 'The "exp" (expiration time) claim identifies the expiration time on or after which the JWT MUST NOT be accepted for processing.', [
   ("Section 4.1.4 of RFC 7519 says a JWT must not be accepted on or after its expiration time.", S, "reference"),
   ("RFC 7519 says a JWT must be rejected 5 minutes after its expiration time.", A, "absent"),
   ("Per section 4.1.4, a JWT stays valid for 24 hours after its exp time.", A, "absent")]),
 ("rfc", "en", "A NumericDate is a JSON numeric value representing the number of seconds from 1970-01-01T00:00:00Z UTC until the specified UTC date/time, ignoring leap seconds.", [
   ("NumericDate counts seconds since 1970-01-01T00:00:00Z UTC.", S, "date"),
   ("NumericDate counts seconds since 1 January 1970.", S, "date"),
   ("NumericDate counts milliseconds since 1980-01-01T00:00:00Z UTC.", C, "date"),
   ("NumericDate counts seconds since the year 1971.", C, "date")]),
 ("rfc", "en", "This is equivalent to the IEEE Std 1003.1, 2013 Edition definition \"Seconds Since the Epoch\", in which each day is accounted for by exactly 86400 seconds.", [
   ("In NumericDate every day has exactly 86400 seconds.", S, "same"),
   ("In NumericDate every day has exactly 86,400 seconds.", S, "separator"),
   ("In NumericDate every day has exactly 86,401 seconds.", C, "changed"),
   ("The definition comes from the 2013 edition of IEEE Std 1003.1.", S, "reference"),
   ("The definition comes from the 2008 edition of IEEE Std 1003.1.", C, "changed")]),
 ("rfc", "en", "Request for Comments: 7519. Category: Standards Track. May 2015. ISSN: 2070-1721.", [
   ("RFC 7519 was published in May 2015.", S, "reference"),
   ("RFC 7519 was published in 2015.", S, "date"),
   ("RFC 7519 was published in 2012.", C, "date"),
   ("RFC 7519 was published in March 2016.", C, "date")]),
 ("rfc", "en", 'Of the signature and MAC algorithms specified in JSON Web Algorithms [JWA], only HMAC SHA-256 ("HS256") and "none" MUST be implemented by conforming JWT implementations.', [
   ("Conforming JWT implementations must implement HMAC SHA-256 (HS256).", S, "reference"),
   ("Conforming implementations must implement two algorithms: HS256 and none.", S, "absent"),
   ("Conforming JWT implementations must implement HS512 and SHA-512.", S, "reference")]),
 ("rfc", "en", "a CRLF line break (13, 10) occurs between the first and second lines, the second line has one leading space (32) and no trailing spaces", [
   ("A CRLF line break (13, 10) sits between the first and second lines.", S, "same"),
   ("A line break (13, 11) sits between the first and second lines.", C, "changed"),
   ("The second line has two leading spaces.", C, "spelled")]),
 ("rfc", "en", 'The "nbf" (not before) claim identifies the time before which the JWT MUST NOT be accepted for processing. Implementers MAY provide for some small leeway, usually no more than a few minutes, to account for clock skew.', [
   ("Implementers may allow a small leeway for clock skew, usually no more than a few minutes.", S, "same"),
   ("Implementers may allow up to 10 minutes of leeway for clock skew.", A, "absent"),
   ("Implementers may allow a leeway of 30 seconds for clock skew.", A, "absent")]),
 ("citations", "en", "Water boils at 100 °C at sea level.", [
   ("Water boils at 90 °C at sea level.", C, "changed"),
   ("Water boils at 100 °C at sea level.", S, "same"),
   ("Water boils at 212 °F at sea level.", S, "unit"),
   ("At sea level water boils at one hundred degrees Celsius.", S, "spelled"),
   ("Water boils at 100 degrees at sea level.", S, "unit"),
   ("Water boils at about 100 °C at sea level.", S, "hedge"),
   ("Water boils at 100 °C at an altitude of 2,000 m.", A, "absent"),
   ("Water boils at 99 °C at sea level.", C, "changed")]),
 ("site", "en", "At sea level, pure water boils at 100 °C (212 °F). That figure holds at standard atmospheric pressure, 101.325 kilopascals, which is the average pressure of the air at sea level.", [
   ("Standard atmospheric pressure is 101.325 kPa.", S, "unit"),
   ("Standard atmospheric pressure is about 101 kilopascals.", S, "hedge"),
   ("Standard atmospheric pressure is 103.5 kilopascals.", C, "changed"),
   ("Standard atmospheric pressure is 1 atm.", S, "unit"),
   ("Pure water boils at 200 °F at sea level.", C, "changed")]),
 ("site", "en", "Water at 50 °C is hot enough to scald skin if you hold a hand in it, but it is far from boiling. Its vapour pressure at that temperature is only about 12 kilopascals, roughly an eighth of the pressure of the air at sea level.", [
   ("Water at 50 °C can scald skin.", S, "same"),
   ("Water at 40 °C can scald skin.", C, "changed"),
   ("At 50 °C the vapour pressure of water is around 12 kPa.", S, "hedge"),
   ("At 50 °C the vapour pressure of water is about 20 kPa.", C, "changed"),
   ("Water at fifty degrees can scald skin.", S, "spelled")]),
 ("site", "en", "At 1,500 metres above sea level the water boiled at about 95 °C, and at 3,000 metres above sea level it came to a full boil at roughly 90 °C.", [
   ("At 3,000 metres water boils at roughly 90 °C.", S, "same"),
   ("At 3 km altitude water boils at about 90 °C.", S, "unit"),
   ("At 3,000 metres water boils at roughly 85 °C.", C, "changed"),
   ("At 1,500 m water boils at about 95 °C.", S, "same"),
   ("At 2,500 metres water boils at about 95 °C.", C, "changed"),
   ("At 3000 metres water boils at 90 degrees.", S, "separator"),
   ("Between 1,500 and 3,000 metres the boiling point falls from 95 °C to 90 °C.", S, "range")]),
 ("site", "en", "If your kitchen is near sea level the thermometer should show 100 °C; if you live higher up, subtract about one degree for each 300 metres of altitude.", [
   ("The boiling point drops by about one degree for every 300 metres of altitude.", S, "spelled"),
   ("The boiling point drops by about 1 °C per 300 m of altitude.", S, "unit"),
   ("The boiling point drops by about one degree for every 100 metres.", C, "changed"),
   ("The boiling point drops by 2 degrees for every 300 metres.", C, "changed")]),
 ("site", "en", "Anders Celsius first proposed a scale with 0 for boiling and 100 for freezing; it was reversed shortly after his death in 1744.", [
   ("Celsius died in 1744.", S, "date"),
   ("Celsius died in 1745.", C, "date"),
   ("Celsius's first scale put boiling at 0 and freezing at 100.", S, "same"),
   ("Celsius's scale was reversed in the 1800s.", A, "absent")]),
 ("site", "en", "By trapping steam, it raises the pressure inside the pot to about one atmosphere above the air outside, and at that pressure water does not boil until it reaches about 120 °C.", [
   ("Inside a pressure cooker water does not boil until it reaches about 120 °C.", S, "same"),
   ("Inside a pressure cooker water boils at about 150 °C.", C, "changed"),
   ("A pressure cooker adds about one atmosphere of pressure.", S, "spelled"),
   ("A pressure cooker adds about two atmospheres of pressure.", C, "spelled")]),
 ("site", "en", "Cooking times for dried beans grow by about an eighth above 1,000 metres, and by up to a quarter above 2,000 metres.", [
   ("Above 1,000 metres beans need about an eighth longer.", S, "same"),
   ("Above 2,000 metres beans need up to a quarter longer.", S, "same"),
   ("Above 500 metres beans need about an eighth longer.", C, "changed"),
   ("Above 2 km beans take up to 25 % longer.", S, "unit")]),
 ("site", "en", "Bottling jars need 0.7 bar, 1 bar and 1.2 bar, and the answer changes with altitude.", [
   ("Jars are processed at 0.7, 1 and 1.2 bar.", S, "same"),
   ("Jars are processed at 0.5 bar.", C, "changed"),
   ("Jars are processed at between 0.7 and 1.2 bar.", S, "range")]),
 ("claims", "en", "In a mountain hut at 3,000 metres above sea level, a pot of water comes to a full boil at roughly 90 °C, ten degrees short of what a sea-level recipe expects.", [
   ("In a mountain hut at 3,000 metres, water boils at roughly 90 °C.", S, "same"),
   ("In a mountain hut water boils ten degrees below the sea-level figure.", S, "spelled"),
   ("In a mountain hut water boils 15 degrees below the sea-level figure.", C, "changed"),
   ("In a mountain hut at 4,000 metres, water boils at roughly 90 °C.", C, "changed")]),
 ("claims", "en", "A tablespoon of salt in a large pot of pasta water lifts it by a small fraction of a degree, far too little to change cooking times.", [
   ("A tablespoon of salt raises the boiling point of pasta water by several degrees.", S, "none"),
   ("A tablespoon of salt raises the boiling point by 3 °C.", A, "absent"),
   ("A tablespoon of salt raises the boiling point by a fraction of a degree.", S, "none")]),
 ("answers", "en", "Mount Everest is 8,849 m (29,032 ft) tall according to the 2020 survey.", [
   ("Everest is 8,849 metres tall.", S, "same"),
   ("Everest is 8849 m tall.", S, "separator"),
   ("Everest is 8,848 m tall.", C, "changed"),
   ("Everest is about 8.8 km tall.", S, "unit"),
   ("Everest is nearly 9,000 m tall.", S, "hedge"),
   ("Everest is 29,032 feet tall.", S, "unit"),
   ("Everest is 8,849 m tall according to the 2015 survey.", C, "date"),
   ("Everest is more than 8,000 m tall.", S, "range"),
   ("Everest is over 9,000 m tall.", C, "range")]),
 ("answers", "en", "The trial enrolled 1,204 patients; 62 % responded to the drug and 12 % reported side effects.", [
   ("62 % of the patients responded.", S, "same"),
   ("62 percent of the patients responded.", S, "unit"),
   ("Between 60 % and 65 % of patients responded.", S, "range"),
   ("About two thirds of patients responded.", C, "spelled"),
   ("72 % of the patients responded.", C, "changed"),
   ("The trial enrolled 1,204 patients.", S, "same"),
   ("The trial enrolled 1.204 patients.", S, "separator"),
   ("The trial enrolled 1,024 patients.", C, "changed"),
   ("The trial enrolled over 1,000 patients.", S, "range"),
   ("The trial ran for 18 months.", A, "absent")]),
 ("answers", "en", "Scores on the exam ranged from 80 % to 90 %, with a median of 85 %.", [
   ("Scores were between 80 % and 90 %.", S, "range"),
   ("Scores were 80–90 %.", S, "range"),
   ("Scores were between 70 % and 90 %.", C, "range"),
   ("The median score was 85 %.", S, "same"),
   ("The median score was 88 %.", C, "changed"),
   ("Scores were between 80 and 95 %.", C, "range")]),
 ("answers", "en", "The company employed about 12,000 people in 2019, up from 9,500 in 2017.", [
   ("The company employed roughly 12,000 people in 2019.", S, "hedge"),
   ("The company employed 12 thousand people in 2019.", S, "spelled"),
   ("The company employed 15,000 people in 2019.", C, "changed"),
   ("The company employed 9,500 people in 2017.", S, "same"),
   ("The company employed 9,500 people in 2016.", C, "date"),
   ("Headcount grew by 2,500 between 2017 and 2019.", A, "absent")]),
 ("answers", "en", "The bridge is 1.2 km long and opened on 19 May 1998 after 4 years of work.", [
   ("The bridge is 1,200 m long.", S, "unit"),
   ("The bridge is 1.5 km long.", C, "changed"),
   ("The bridge opened on 19 May 1998.", S, "date"),
   ("The bridge opened on 21 May 1998.", C, "date"),
   ("The bridge took four years to build.", S, "spelled"),
   ("The bridge took six years to build.", C, "spelled"),
   ("The bridge opened in 1998-05-19.", S, "date")]),
 ("answers", "en", "A dozen eggs weigh roughly 700 g, and the recipe needs half of them.", [
   ("Twelve eggs weigh about 700 grams.", S, "spelled"),
   ("A dozen eggs weigh about 0.7 kg.", S, "unit"),
   ("A dozen eggs weigh about 1.5 kg.", C, "unit"),
   ("Ten eggs weigh about 700 g.", C, "spelled")]),
 ("exotic", "en", "The survey reached 1,000 users and the culture held 1,000,000 cells; 3 apples remained.", [
   ("The survey reached 1e3 users.", S, "exotic"),
   ("The survey reached 1e4 users.", C, "exotic"),
   ("The culture held 10⁶ cells.", S, "exotic"),
   ("The culture held 10⁵ cells.", C, "exotic"),
   ("٣ apples remained.", S, "exotic"),
   ("٤ apples remained.", C, "exotic"),
   ("The culture held 1e999 cells.", C, "exotic")]),
 ("exotic", "en", "Use 1.5 cups of flour and 0.25 cups of sugar.", [
   ("Use 1½ cups of flour.", S, "exotic"),
   ("Use 2½ cups of flour.", C, "exotic"),
   ("Use ¼ cup of sugar.", S, "exotic"),
   ("Use ¾ cup of sugar.", C, "exotic")]),
 # French
 ("site-fr", "fr", "Au niveau de la mer, l'eau pure bout à 100 °C. À 3 000 mètres d'altitude, elle bout vers 90 °C.", [
   ("L'eau bout à 100 °C au niveau de la mer.", S, "same"),
   ("L'eau bout à 90 °C au niveau de la mer.", C, "changed"),
   ("À 3 000 mètres, l'eau bout à environ 90 °C.", S, "separator"),
   ("À 3000 m, l'eau bout à environ 90 degrés.", S, "unit"),
   ("À 4 000 mètres, l'eau bout à environ 90 °C.", C, "changed"),
   ("L'eau bout à cent degrés au niveau de la mer.", S, "spelled")]),
 ("answers-fr", "fr", "L'Everest culmine à 8 849 mètres ; l'essai a inclus 1 204 patients dont 62,5 % ont répondu.", [
   ("L'Everest culmine à 8 849 m.", S, "separator"),
   ("L'Everest culmine à 8849 mètres.", S, "separator"),
   ("L'Everest culmine à 8 848 mètres.", C, "changed"),
   ("62,5 % des patients ont répondu.", S, "separator"),
   ("62,5 pour cent des patients ont répondu.", S, "unit"),
   ("52,5 % des patients ont répondu.", C, "changed"),
   ("L'essai a inclus plus de mille patients.", S, "spelled"),
   ("L'essai a duré six mois.", A, "absent")]),
 ("answers-fr", "fr", "Le pont mesure 1,2 km et a ouvert en 1998, après quatre ans de travaux ; entre 80 et 90 % des usagers en sont satisfaits.", [
   ("Le pont mesure 1 200 mètres.", S, "unit"),
   ("Le pont mesure 1,5 km.", C, "changed"),
   ("Le pont a ouvert en 1998.", S, "date"),
   ("Le pont a ouvert en 1999.", C, "date"),
   ("Les travaux ont duré quatre ans.", S, "spelled"),
   ("Les travaux ont duré vingt-deux ans.", C, "spelled"),
   ("Entre 80 et 90 % des usagers sont satisfaits.", S, "range"),
   ("Entre 70 et 90 % des usagers sont satisfaits.", C, "range"),
   ("Le pont a coûté 300 millions d'euros.", A, "absent")]),
 ("rfc-fr", "fr", "La RFC 7519, publiée en mai 2015, définit le JWT ; selon la section 4.1.4, un jeton expiré ne doit pas être accepté.", [
   ("La RFC 7519 a été publiée en 2015.", S, "reference"),
   ("La RFC 7519 a été publiée en 2016.", C, "date"),
   ("La section 4.1.4 de la RFC 7519 interdit d'accepter un jeton expiré.", S, "reference"),
   ("Un jeton reste valable 5 minutes après expiration.", A, "absent")]),
 # German
 ("site-de", "de", "Auf Meereshöhe siedet reines Wasser bei 100 °C. In 3.000 Metern Höhe siedet es bei etwa 90 °C.", [
   ("Wasser siedet auf Meereshöhe bei 100 °C.", S, "same"),
   ("Wasser siedet auf Meereshöhe bei 90 °C.", C, "changed"),
   ("In 3.000 Metern Höhe siedet Wasser bei etwa 90 °C.", S, "separator"),
   ("In 3000 m Höhe siedet Wasser bei ungefähr 90 Grad.", S, "unit"),
   ("In 2.000 Metern Höhe siedet Wasser bei etwa 90 °C.", C, "changed"),
   ("Wasser siedet auf Meereshöhe bei hundert Grad.", S, "spelled")]),
 ("answers-de", "de", "Der Mount Everest ist 8.849 Meter hoch. An der Studie nahmen 1.204 Patienten teil, von denen 62,5 % ansprachen.", [
   ("Der Everest ist 8.849 m hoch.", S, "separator"),
   ("Der Everest ist 8849 Meter hoch.", S, "separator"),
   ("Der Everest ist 8.848 Meter hoch.", C, "changed"),
   ("62,5 Prozent der Patienten sprachen an.", S, "unit"),
   ("65,5 % der Patienten sprachen an.", C, "changed"),
   ("Über tausend Patienten nahmen teil.", S, "spelled"),
   ("Die Studie dauerte 18 Monate.", A, "absent")]),
 ("answers-de", "de", "Die Brücke ist 1,2 km lang und wurde 1998 nach vier Jahren Bauzeit eröffnet; zwischen 80 und 90 % der Nutzer sind zufrieden.", [
   ("Die Brücke ist 1.200 Meter lang.", S, "unit"),
   ("Die Brücke ist 1,5 km lang.", C, "changed"),
   ("Die Brücke wurde 1998 eröffnet.", S, "date"),
   ("Die Brücke wurde 2001 eröffnet.", C, "date"),
   ("Der Bau dauerte vier Jahre.", S, "spelled"),
   ("Der Bau dauerte zweiundzwanzig Jahre.", C, "spelled"),
   ("Zwischen 80 und 90 % der Nutzer sind zufrieden.", S, "range"),
   ("Zwischen 60 und 90 % der Nutzer sind zufrieden.", C, "range"),
   ("Die Brücke kostete 300 Millionen Euro.", A, "absent")]),
 ("rfc-de", "de", "RFC 7519 wurde im Mai 2015 veröffentlicht; laut Abschnitt 4.1.4 darf ein abgelaufenes Token nicht akzeptiert werden.", [
   ("RFC 7519 erschien 2015.", S, "reference"),
   ("RFC 7519 erschien 2017.", C, "date"),
   ("Abschnitt 4.1.4 von RFC 7519 verbietet abgelaufene Token.", S, "reference"),
   ("Ein Token bleibt 10 Minuten nach Ablauf gültig.", A, "absent")]),
 # Russian
 ("site-ru", "ru", "На уровне моря чистая вода кипит при 100 °C. На высоте 3 000 метров она кипит примерно при 90 °C.", [
   ("Вода кипит при 100 °C на уровне моря.", S, "same"),
   ("Вода кипит при 90 °C на уровне моря.", C, "changed"),
   ("На высоте 3 000 м вода кипит примерно при 90 °C.", S, "separator"),
   ("На высоте 3000 метров вода кипит около 90 градусов.", S, "unit"),
   ("На высоте 4 000 метров вода кипит примерно при 90 °C.", C, "changed"),
   ("Вода кипит при ста градусах на уровне моря.", S, "spelled")]),
 ("answers-ru", "ru", "Высота Эвереста составляет 8 849 метров. В исследовании участвовали 1 204 пациента, 62,5 % из них ответили на лечение.", [
   ("Высота Эвереста 8 849 м.", S, "separator"),
   ("Высота Эвереста 8849 метров.", S, "separator"),
   ("Высота Эвереста 8 848 метров.", C, "changed"),
   ("62,5 процента пациентов ответили на лечение.", S, "unit"),
   ("72,5 % пациентов ответили на лечение.", C, "changed"),
   ("В исследовании участвовало более тысячи пациентов.", S, "spelled"),
   ("Исследование длилось 18 месяцев.", A, "absent")]),
 ("answers-ru", "ru", "Мост длиной 1,2 км открыли в 1998 году после четырёх лет работ; от 80 до 90 % пользователей довольны.", [
   ("Длина моста 1 200 метров.", S, "unit"),
   ("Длина моста 1,5 км.", C, "changed"),
   ("Мост открыли в 1998 году.", S, "date"),
   ("Мост открыли в 2003 году.", C, "date"),
   ("Строительство длилось четыре года.", S, "spelled"),
   ("Строительство длилось двадцать пять лет.", C, "spelled"),
   ("От 80 до 90 % пользователей довольны.", S, "range"),
   ("От 50 до 90 % пользователей довольны.", C, "range"),
   ("Мост стоил 300 миллионов рублей.", A, "absent")]),
 ("rfc-ru", "ru", "RFC 7519 опубликован в мае 2015 года; согласно разделу 4.1.4, просроченный токен нельзя принимать.", [
   ("RFC 7519 опубликован в 2015 году.", S, "reference"),
   ("RFC 7519 опубликован в 2014 году.", C, "date"),
   ("Раздел 4.1.4 RFC 7519 запрещает принимать просроченные токены.", S, "reference"),
   ("Токен действителен 10 минут после истечения срока.", A, "absent")]),
]
rows = []
for g, (source, lang, evidence, claims) in enumerate(G, 1):
    for k, (claim, label, case) in enumerate(claims, 1):
        rows.append({"id": f"{source}-{g:02d}-{k}", "lang": lang, "source": source, "case": case,
                     "label": label, "claim": claim, "evidence": evidence})
with open(Path(__file__).with_name("pairs.jsonl"), "w", encoding="utf-8") as f:
    for r in rows:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
import collections
print(len(rows), collections.Counter(r["label"] for r in rows), collections.Counter(r["lang"] for r in rows))
