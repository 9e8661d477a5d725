"""Build data/notices/notices.jsonl: notice pages and hard negatives (README.md says how and from where).

Each row: {id, lang, source, title, first_screen, label}. A notice row puts a publisher's or a news site's
own notice wording (the NOTICES table: kind, lang, source, title pattern, banner) on the first screen of an
article (the ARTICLES table: a title and its opening lines); the hard negatives are written out in NEGATIVES.
Deterministic: run `python data/notices/build.py` to write the file again.
"""
from __future__ import annotations

import json
from pathlib import Path

ARTICLES = [  # (lang, title, opening lines of the article's first screen)
    ("en", "Vitamin D supplementation and fracture risk in older adults: a randomised trial",
     "Abstract\nBackground: Vitamin D is widely prescribed to prevent fractures. Methods: We "
     "randomised 2,256 "
     "community-dwelling adults aged 70 or over to 60,000 IU monthly or placebo for three years."),
    ("en", "Graphene oxide membranes for selective ion sieving",
     "Abstract\nGraphene oxide membranes show a sharp cut-off for hydrated ions larger than 4.5 Å. Here we "
     "report tunable interlayer spacing by physical confinement."),
    ("en", "Hydroxychloroquine and azithromycin as a treatment of COVID-19: results of an open-label trial",
     "Abstract\nChloroquine and hydroxychloroquine have been found to be efficient on SARS-CoV-2. We report "
     "the early results of an open-label non-randomized clinical trial."),
    ("en", "Microplastics in the gut of coastal fish species of the North Sea",
     "Introduction\nPlastic debris is ubiquitous in marine environments. We sampled 1,203 fish of 12 species "
     "and examined their gastrointestinal tracts for particles larger than 100 µm."),
    ("en", "A deep learning model for early detection of sepsis from routine vital signs",
     "Abstract\nSepsis kills 11 million people a year. We trained a recurrent network on "
     "42,000 intensive care "
     "admissions and evaluated it prospectively in three hospitals."),
    ("en", "Social priming of prosocial behaviour: a field experiment",
     "Abstract\nExposure to words related to money reduced helping behaviour in three field experiments "
     "(total N = 1,128)."),
    ("en", "Room-temperature superconductivity in a nitrogen-doped lutetium hydride",
     "Abstract\nThe absence of electrical resistance exhibited by superconducting materials would have "
     "enormous potential for applications if it existed at ambient temperature and pressure."),
    ("en", "Effects of intermittent fasting on weight loss and insulin resistance: a meta-analysis",
     "Results\nTwenty-seven trials (n = 1,804) were included. Intermittent fasting reduced body weight by "
     "3.2 kg compared with continuous energy restriction."),
    ("en", "Gut microbiota composition predicts response to anti-PD-1 immunotherapy in melanoma",
     "Abstract\nWe profiled the faecal microbiome of 112 patients with metastatic melanoma before "
     "treatment with anti-PD-1 antibodies."),
    ("en", "Long-term effects of a sugar-sweetened beverage tax on purchases in Mexico",
     "Abstract\nMexico introduced a one-peso-per-litre tax in 2014. Purchases of taxed "
     "beverages fell by 7.6% "
     "over the first two years."),
    ("fr", "Effets de la pollution atmosphérique sur la fonction respiratoire des enfants à Paris",
     "Résumé\nNous avons suivi 1 430 enfants scolarisés à Paris pendant quatre ans et mesuré leur volume "
     "expiratoire maximal par seconde."),
    ("fr", "Le télétravail et la productivité des entreprises françaises après 2020",
     "Résumé\nÀ partir des données de l'enquête Acemo, nous estimons l'effet du télétravail sur la "
     "productivité apparente du travail."),
    ("fr", "Efficacité de l'hydroxychloroquine chez les patients hospitalisés pour COVID-19",
     "Résumé\nCette étude rétrospective porte sur 1 061 patients traités à l'IHU Méditerranée Infection."),
    ("de", "Wirksamkeit von Akupunktur bei chronischen Rückenschmerzen: eine randomisierte Studie",
     "Zusammenfassung\nIn dieser Studie wurden 1 162 Patientinnen und Patienten mit chronischen "
     "Rückenschmerzen randomisiert drei Gruppen zugeteilt."),
    ("de", "Mikroplastik in Trinkwasserproben aus Bayern",
     "Zusammenfassung\nWir untersuchten 38 Trinkwasserproben auf Partikel zwischen 20 und 500 µm mittels "
     "FTIR-Spektroskopie."),
    ("de", "Der Einfluss der Energiepreise auf die Industrieproduktion 2022",
     "Einleitung\nDie Gaspreise stiegen 2022 auf das Zehnfache ihres Vorkrisenniveaus. Wir schätzen die "
     "Auswirkungen auf energieintensive Branchen."),
    ("ru", "Влияние экстракта эхинацеи на частоту острых респираторных инфекций у детей",
     "Аннотация\nВ исследование включены 312 детей в возрасте от 3 до 7 лет, получавших экстракт эхинацеи "
     "или плацебо в течение 12 недель."),
    ("ru", "Экономический рост регионов России в 2010–2020 годах",
     "Аннотация\nНа основе данных Росстата оценивается вклад инвестиций в основной капитал в рост валового "
     "регионального продукта."),
    ("ru", "Эффективность умифеновира при гриппе: рандомизированное исследование",
     "Аннотация\nВ рандомизированное двойное слепое исследование включены 380 взрослых пациентов с "
     "лабораторно подтверждённым гриппом."),
]

# (label, lang, source, title pattern ({t}: the article's title), banner (the notice's own words))
NOTICES = [
    ("retracted", "en", "elsevier", "RETRACTED: {t}",
     "This article has been retracted: please see Elsevier Policy on Article Withdrawal "
     "(https://www.elsevier.com/locate/withdrawalpolicy)."),
    ("retracted", "en", "elsevier", "{t}",
     "This article has been retracted: please see Elsevier Policy on Article Withdrawal "
     "(https://www.elsevier.com/locate/withdrawalpolicy). This article has been retracted at the request of "
     "the Editor-in-Chief."),
    ("retracted", "en", "springer", "Retraction Note: {t}",
     "The Editor-in-Chief has retracted this article because the data reported in Fig. 3 are unreliable. "
     "The authors do not agree with this retraction."),
    ("retracted", "en", "springer", "RETRACTED ARTICLE: {t}",
     "This article was retracted on 14 March 2023\nRetraction Note to this article was published on "
     "14 March 2023"),
    ("retracted", "en", "nature", "Retraction Note to: {t}",
     "Retraction of: Scientific Reports, published online 13 January 2021\n\nThe Editors have retracted this "
     "Article. Following publication, concerns were raised about the rationale for the approach presented."),
    ("retracted", "en", "springer", "Retraction: {t}",
     "The Editors-in-Chief have retracted this article. After publication, the authors "
     "requested a retraction "
     "because they were unable to reproduce some of the results."),
    ("retracted", "en", "wiley", "RETRACTION: {t}",
     "The above article, published online on 2 May 2019 in Wiley Online Library (wileyonlinelibrary.com), "
     "has been retracted by agreement between the journal Editor-in-Chief and John Wiley & Sons Ltd."),
    ("retracted", "en", "plos", "Retraction: {t}",
     "After this article was published, concerns were raised about the results reported in Figure 2. "
     "In light of these concerns, the PLOS ONE Editors retract this article."),
    ("retracted", "en", "taylor_francis", "Statement of Retraction: {t}",
     "We, the Editors and Publishers of the journal, have retracted the following article: following "
     "publication, significant concerns were raised about the integrity of the peer review."),
    ("retracted", "en", "jama", "Notice of Retraction: {t}",
     "To the Editor: On behalf of my coauthors, I write to report errors in our article and to request its "
     "retraction."),
    ("retracted", "en", "ieee", "Notice of Retraction: {t}",
     "After careful and considered review of the content of this paper by a duly constituted expert "
     "committee, this paper has been found to be in violation of IEEE's Publication Principles."),
    ("retracted", "en", "taylor_francis", "{t}",
     "This article has been retracted by the publisher. For more information please see the statement on "
     "this article."),
    ("retracted", "en", "frontiers", "Retraction: {t}",
     "A Retraction of the Original Research Article. The journal retracts the 2021 article cited above. "
     "Following publication, concerns were raised regarding the integrity of the data."),
    ("retracted", "fr", "elsevier_masson", "Rétractation : {t}",
     "Cet article a été rétracté à la demande des auteurs et du rédacteur en chef. Voir la politique "
     "d'Elsevier sur le retrait des articles."),
    ("retracted", "fr", "revue", "ARTICLE RÉTRACTÉ : {t}",
     "Avis de rétractation. La revue rétracte cet article à la suite d'une enquête sur l'intégrité des "
     "données."),
    ("retracted", "de", "springer_medizin", "Zurückgezogener Artikel: {t}",
     "Dieser Beitrag wurde von den Herausgebern zurückgezogen. Die Daten in Tabelle 2 konnten nicht "
     "bestätigt werden."),
    ("retracted", "de", "fachzeitschrift", "Widerruf: {t}",
     "Die Redaktion und die Autoren widerrufen diesen Beitrag wegen eines Fehlers in der statistischen "
     "Auswertung."),
    ("retracted", "de", "fachzeitschrift", "Zurückgezogen: {t}",
     "Der Artikel wurde auf Wunsch der Autoren zurückgezogen."),
    ("retracted", "ru", "elibrary", "Ретракция: {t}",
     "Статья отозвана по решению редакции в связи с обнаружением некорректных заимствований."),
    ("retracted", "ru", "cyberleninka", "{t}",
     "Статья отозвана редакцией журнала по согласованию с авторами в связи с дублирующей публикацией."),
    ("retracted", "ru", "journal_ru", "Уведомление об отзыве статьи «{t}»",
     "Редакция журнала отзывает статью в связи с нарушением публикационной этики."),
    ("withdrawn", "en", "elsevier", "WITHDRAWN: {t}",
     "This article has been withdrawn at the request of the author(s) and/or editor. The "
     "Publisher apologizes "
     "for any inconvenience this may cause. The full Elsevier Policy on Article Withdrawal can be found at "
     "https://www.elsevier.com/about/policies/article-withdrawal."),
    ("withdrawn", "en", "arxiv", "{t}",
     "Comments: This paper has been withdrawn by the author due to a crucial error in equation 4."),
    ("withdrawn", "en", "arxiv", "[Withdrawn] {t}",
     "This paper has been withdrawn by the authors. A corrected analysis will appear in a separate "
     "submission."),
    ("withdrawn", "en", "medrxiv", "{t}",
     "Withdrawal Statement: The authors have withdrawn this manuscript because the cohort definition was "
     "found to include duplicated patients. Therefore, the authors do not wish this work to be cited."),
    ("withdrawn", "en", "cochrane", "WITHDRAWN: {t}",
     "This review has been withdrawn because it is out of date. The editorial group responsible for this "
     "review has not updated it."),
    ("withdrawn", "fr", "hal", "Article retiré : {t}",
     "Cet article a été retiré par ses auteurs. Une version corrigée est en préparation."),
    ("withdrawn", "de", "preprint_de", "{t}",
     "Dieser Beitrag wurde vom Autor zurückgezogen, da die Stichprobe fehlerhaft erhoben wurde."),
    ("withdrawn", "ru", "preprint_ru", "{t}",
     "Препринт отозван авторами: обнаружена ошибка в расчётах."),
    ("expression_of_concern", "en", "plos", "Expression of Concern: {t}",
     "After this article was published, concerns were raised regarding results presented in Figure 5. "
     "The PLOS ONE Editors issue this Expression of Concern to notify readers of the above concerns."),
    ("expression_of_concern", "en", "nature", "{t}",
     "Editor's Note: Readers are alerted that concerns have been raised about the data presented in this "
     "article. Editorial action will be taken as appropriate once this matter is resolved."),
    ("expression_of_concern", "en", "lancet", "Expression of concern—{t}",
     "On June 3, 2020, The Lancet issued an Expression of Concern about this study while an independent "
     "audit of the data was under way."),
    ("expression_of_concern", "en", "springer", "Editorial Expression of Concern: {t}",
     "The Editor-in-Chief is issuing an editorial expression of concern to alert readers that concerns have "
     "been raised regarding some of the images in this article."),
    ("expression_of_concern", "fr", "revue", "Avis de préoccupation : {t}",
     "Les lecteurs sont avertis que des doutes ont été exprimés quant à la fiabilité des "
     "données présentées."),
    ("expression_of_concern", "de", "fachzeitschrift", "{t}",
     "Besorgnisäußerung der Herausgeber: Leser werden darauf hingewiesen, dass Bedenken zu den Abbildungen "
     "dieses Beitrags geäußert wurden."),
    ("expression_of_concern", "ru", "journal_ru", "Выражение обеспокоенности: {t}",
     "Редакция журнала выражает обеспокоенность достоверностью данных, представленных в статье."),
    ("correction", "en", "springer", "Correction to: {t}",
     "The original article can be found online. In the original publication of this article, the second "
     "author's affiliation was incorrect. The correct affiliation is given below."),
    ("correction", "en", "springer", "{t}",
     "A Correction to this article was published on 12 May 2022\nThis article has been updated"),
    ("correction", "en", "nature", "Author Correction: {t}",
     "Correction to: Nature Communications https://doi.org/10.1038/s41467-020-1234-5, published online "
     "3 March 2020. The original version of this Article contained an error in Fig. 2b."),
    ("correction", "en", "plos", "Correction: {t}",
     "There are errors in Table 2. The sample size of the control group should be 124, not 142. "
     "Please see the correct Table 2 here."),
    ("correction", "en", "elsevier", "Corrigendum to \"{t}\" [J. Clin. Epidemiol. 140 (2021) 11–19]",
     "The authors regret that the confidence interval in the abstract was misprinted."),
    ("correction", "en", "journal", "Erratum: {t}",
     "In the article published in Volume 12, the units on the y-axis of Figure 1 were incorrect."),
    ("correction", "en", "jama", "Notice of Retraction and Replacement: {t}",
     "To the Editor: We wish to report a coding error in our study. The corrected results are presented in "
     "the replacement article."),
    ("correction", "en", "news_nyt", "{t}",
     "Correction: An earlier version of this article misstated the number of participants in the trial. "
     "It was 2,256, not 2,526."),
    ("correction", "en", "news_guardian", "{t}",
     "This article was amended on 4 May 2022 to correct the name of the journal in which the study "
     "appeared."),
    ("correction", "en", "news_wapo", "{t}",
     "Editor's note: An earlier version of this story incorrectly described the trial as randomized."),
    ("correction", "en", "news_bbc", "{t}",
     "Correction appended: this story has been changed to make clear that the data are preliminary."),
    ("correction", "fr", "news_lemonde", "{t}",
     "Rectificatif : une précédente version de cet article indiquait par erreur que l'étude portait sur "
     "1 340 enfants."),
    ("correction", "fr", "revue", "Erratum : {t}",
     "Une erreur s'est glissée dans le tableau 3 de l'article publié dans le numéro 4."),
    ("correction", "de", "news_spiegel", "{t}",
     "Korrektur: In einer früheren Version dieses Artikels hieß es, die Studie sei randomisiert gewesen. "
     "Wir haben den Fehler korrigiert."),
    ("correction", "de", "fachzeitschrift", "Berichtigung: {t}",
     "Im Beitrag ist in Tabelle 1 ein Fehler aufgetreten. Die korrekte Tabelle finden Sie hier."),
    ("correction", "de", "news_zeit", "{t}",
     "Anmerkung der Redaktion: In einer früheren Fassung dieses Textes war das Studiendatum falsch "
     "angegeben."),
    ("correction", "ru", "journal_ru", "Исправление к статье «{t}»",
     "В статье, опубликованной в № 3 за 2021 год, допущена ошибка в таблице 2."),
    ("correction", "ru", "news_ru", "{t}",
     "Исправление: в первоначальной версии статьи была неверно указана дата публикации исследования."),
    ("correction", "ru", "news_ru", "Опровержение",
     "Редакция опровергает сведения, опубликованные в статье «{t}», как не соответствующие "
     "действительности."),
]

NEGATIVES = [  # (lang, source, title, first_screen): pages with no notice about themselves
    ("en", "retraction_watch", "Journal retracts paper on hydroxychloroquine after four years",
     "A controversial paper that helped fuel the hydroxychloroquine craze has been retracted. The notice "
     "cites concerns about ethics approval and the timing of patient enrolment."),
    ("en", "retraction_watch", "Publisher retracts \u201cconceptual penis\u201d hoax article",
     "File this under \u201cnot a surprise.\u201d After the authors of the paper confessed it "
     "was a hoax, the "
     "publisher has retracted it.\nThe notice is sparse:\n> This article has been retracted by "
     "the publisher. "
     "For more information please see the statement on this article."),
    ("en", "news", "Why the number of retracted papers is rising",
     "More than 10,000 research papers were retracted in 2023, a record. Most retractions involved paper "
     "mills and compromised peer review, according to an analysis by Nature."),
    ("en", "blog", "Retractions are good for science",
     "Retractions: a brief history. The first retraction notice in a biomedical journal appeared in 1977. "
     "Since then the rate has risen steadily."),
    ("en", "policy", "Retraction of Manuscript",
     "Papers published in this journal will be considered for retraction if they have clear evidence that "
     "the findings are unreliable, as a result of misconduct or honest error."),
    ("en", "policy", "Article retraction and statement of concern",
     "According to the COPE Retraction Guidelines that our journal adheres to, an article may be retracted "
     "for the following reasons: unreliable conclusions, redundant publication, plagiarism."),
    ("en", "mdpi", "Retraction Notices: Who Authored Them?",
     "Abstract\nUnlike other academic publications whose authorship is eagerly claimed, the provenance of "
     "retraction notices (RNs) is often obscured."),
    ("en", "health", "Nicotine withdrawal: symptoms and how to manage them",
     "Withdrawal symptoms usually start within a few hours of the last cigarette and peak in the first "
     "three days. Common symptoms include irritability, anxiety and cravings."),
    ("en", "health", "Opioid withdrawal",
     "Withdrawal: what to expect. Opioid withdrawal occurs when a person who is dependent on opioids stops "
     "or sharply reduces their use."),
    ("en", "news", "UK parliament approves the Brexit withdrawal agreement",
     "Members of Parliament voted 330 to 231 in favour of the Withdrawal Agreement Bill on Thursday."),
    ("en", "bank", "Cash withdrawal limits at ATMs",
     "Withdrawn amounts over your daily limit will be declined. You can change your limit in the app."),
    ("en", "news", "Troops withdrawn from border region",
     "The last units were withdrawn from the region on Sunday, the defence ministry said."),
    ("en", "news", "Study finds exercise improves memory in older adults",
     "A study of 454 adults published on Tuesday found that aerobic exercise improved recall.\n\n"
     "Corrections policy | Contact us | Privacy"),
    ("en", "news_footer", "City council approves new bike lanes",
     "The council voted 7 to 2 on Monday to add 14 miles of protected lanes.\nReport an error\n"
     "Corrections: see our corrections and clarifications page."),
    ("en", "news", "Vaccines do not cause autism, large Danish study confirms",
     "A study of 657,461 children found no link between the MMR vaccine and autism. The 1998 paper that "
     "started the scare was retracted by The Lancet in 2010 after its author was found to have falsified "
     "data."),
    ("en", "journal", "Gut microbiota and autism spectrum disorder: a review",
     "Introduction\nEarly reports linking gastrointestinal symptoms to autism, including a study later "
     "retracted, prompted research into the gut-brain axis."),
    ("en", "tutorial", "Gamma correction explained",
     "Gamma correction maps linear light intensities to the non-linear values a display expects."),
    ("en", "tutorial", "Error correction codes: Hamming and Reed-Solomon",
     "Error correction lets a receiver recover the original message when some bits are flipped."),
    ("en", "tutorial", "Color correction in Lightroom",
     "Correction: white balance first, then exposure. This guide walks through both."),
    ("en", "news", "Stocks fall as markets enter correction territory",
     "The S&P 500 closed 10% below its January high on Friday, a correction."),
    ("en", "guardian", "Corrections and clarifications",
     "An article about tidal energy misstated the capacity of the Swansea scheme. It is 320MW, not 240MW. "
     "Corrections are listed here each weekday."),
    ("en", "gelf", "Corrections 6/20-6/27",
     "Every week, Gelf combs through media corrections.\nSalon, June 22: An earlier version of \"Deadly "
     "Immunity\" stated that the Institute of Medicine convened a second panel."),
    ("en", "un", "UN experts express concern over detention of journalists",
     "Independent experts expressed grave concern on Monday over the arrest of 12 journalists."),
    ("en", "journal", "Concerns about the reproducibility of priming effects",
     "Abstract\nWe attempted to replicate 12 priming studies. Readers should be aware that effect sizes "
     "shrank by half."),
    ("en", "news", "Editor's note: this article is part of our series on climate adaptation",
     "Editor's note: This article is part of a series on how cities adapt to heat. Read the rest here."),
    ("en", "arxiv", "Attention is all you need",
     "Comments: 15 pages, 5 figures. Subjects: Computation and Language (cs.CL)\nAbstract: The dominant "
     "sequence transduction models are based on complex recurrent or convolutional neural networks."),
    ("en", "journal", "Withdrawal of antihypertensive medication in older people",
     "Abstract\nBackground: Deprescribing antihypertensives may reduce falls. We randomised 569 patients "
     "to withdrawal or continuation."),
    ("en", "wiki", "Retraction in academic publishing",
     "In academic publishing, a retraction is a mechanism by which a published paper is marked as "
     "seriously flawed. Retracted papers are not removed from the published literature."),
    ("en", "news", "Newsweek retracts Koran story",
     "Newsweek said on Monday it was retracting a report that interrogators had desecrated a Koran."),
    ("en", "blog", "How to write a correction notice",
     "A good correction notice says what was wrong, what is right and when it changed."),
    ("fr", "news", "Le nombre d'articles scientifiques rétractés est en hausse",
     "La rétractation d'articles par les éditeurs de revues scientifiques a connu une hausse importante au "
     "cours de la dernière décennie pour atteindre un sommet en 2023."),
    ("fr", "boutique", "Conditions générales de vente",
     "Droit de rétractation : vous disposez d'un délai de quatorze jours pour exercer votre droit de "
     "rétractation sans avoir à motiver votre décision."),
    ("fr", "blog", "Pourquoi des études sont-elles rétractées?",
     "« Rétractation » est le terme par lequel on désigne le fait de retirer une étude des archives de la "
     "revue qui l'avait initialement publiée."),
    ("fr", "news", "Le Monde publie un (discret) rectificatif",
     "Douze jours plus tard, le quotidien a donc publié un rectificatif particulièrement discret en bas de "
     "l'avant-dernière page."),
    ("fr", "news", "Retrait des troupes françaises du Sahel",
     "Les derniers soldats se sont retirés de la base de Gao lundi, selon l'état-major."),
    ("fr", "cdjm", "Rectification des erreurs : les bonnes pratiques",
     "Pour un journaliste, la pratique du rectificatif est un impératif, rappelé par les chartes "
     "professionnelles."),
    ("de", "shop", "Widerrufsbelehrung",
     "Widerrufsrecht: Sie haben das Recht, binnen vierzehn Tagen ohne Angabe von Gründen diesen Vertrag zu "
     "widerrufen."),
    ("de", "lexikon", "Berichtigung (Medienrecht)",
     "Eine Berichtigung ist die Behebung einer falschen Information. Im Medienrecht versteht man darunter "
     "die Richtigstellung einer Tatsachenbehauptung."),
    ("de", "blog", "Korrekturlesen: zehn Tipps für Ihre Abschlussarbeit",
     "Korrektur lesen ist mühsam, aber lohnend. Drucken Sie den Text aus und lesen Sie ihn laut."),
    ("de", "news", "Rückzug aus der Politik: Ministerin tritt zurück",
     "Die Ministerin hat ihren Rückzug aus der Politik angekündigt. Sie wolle sich der Familie widmen."),
    ("de", "news", "Immer mehr Fachartikel werden zurückgezogen",
     "Die Zahl der zurückgezogenen wissenschaftlichen Artikel hat 2023 einen Höchststand erreicht."),
    ("de", "health", "Entzugserscheinungen beim Rauchstopp",
     "Entzugssymptome treten meist in den ersten Tagen nach der letzten Zigarette auf."),
    ("ru", "shop", "Отзывы покупателей о смартфоне",
     "Отзывы: 4,6 из 5. «Отличный телефон, батарея держит два дня» — Ирина, 12 марта."),
    ("ru", "journal_ru", "Отзыв на статью «Экономический рост регионов России»",
     "Рецензент отмечает актуальность темы и рекомендует статью к публикации после доработки."),
    ("ru", "news", "Число отозванных научных статей в 2023 году превысило 10 тысяч",
     "В Nature вышло сообщение о том, что за 2023 год сильно возросло количество отозванных научных работ."),
    ("ru", "trv", "Неуспехи физиологических наук",
     "Понятие ретракции, или, попросту, отзыва статьи, недавно стало в российской научной печати "
     "расхожим термином."),
    ("ru", "news", "Посол отозван для консультаций",
     "Министерство иностранных дел сообщило, что посол отозван в Москву для консультаций."),
    ("ru", "edu", "Исправление ошибок в сочинении: памятка",
     "Как исправить ошибки в сочинении: прочитайте текст вслух и проверьте пунктуацию."),
]


def rows() -> list[dict]:
    """Every notice wording on ARTICLES of its language (two articles each, chosen by a fixed stride), every
    article once with no notice, and the hard negatives."""
    out = []
    for n, (label, lang, source, title, banner) in enumerate(NOTICES):
        same = [a for a in ARTICLES if a[0] == lang]
        for k in range(2 if lang == "en" else 3):
            _, art_title, opening = same[(n * 3 + k) % len(same)]
            first = f"{title.format(t=art_title)}\n\n{banner.format(t=art_title)}\n\n{art_title}\n\n{opening}"
            out.append({"id": f"n{n:02d}-{k}", "lang": lang, "source": source,
                        "title": title.format(t=art_title), "first_screen": first, "label": label})
    for n, (lang, title, opening) in enumerate(ARTICLES):
        out.append({"id": f"a{n:02d}", "lang": lang, "source": "article", "title": title,
                    "first_screen": f"{title}\n\n{opening}", "label": "none"})
    for n, (lang, source, title, text) in enumerate(NEGATIVES):
        out.append({"id": f"h{n:02d}", "lang": lang, "source": source, "title": title,
                    "first_screen": f"{title}\n\n{text}", "label": "none"})
    return out


if __name__ == "__main__":
    path = Path(__file__).with_name("notices.jsonl")
    with path.open("w", encoding="utf-8") as out:
        for row in rows():
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{path}: {len(rows())} rows")
